/** @aexhq/brain-db/embedded: The embedded Postgres of `npm start` and the tests. */
export {
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
  runningEmbeddedUrl,
  startEmbeddedPostgres,
} from "../embedded.js";

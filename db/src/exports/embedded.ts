/** @aexhq/brain-db/embedded: The embedded Postgres of `npm start` and the tests; a Citus cluster of them. */

export {
  type EmbeddedPostgres,
  type EmbeddedPostgresOptions,
  runningEmbeddedUrl,
  startEmbeddedPostgres,
} from "../embedded.js";
export {
  type CitusCluster,
  type CitusClusterOptions,
  citusBinDir,
  citusBuilt,
  dropCitusDatabase,
  joinCitusDatabase,
  startCitusCluster,
} from "../embedded-citus.js";

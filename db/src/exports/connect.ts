/** @aexhq/brain-db/connect: Connecting: pools and lanes, URLs and roles, the database going away, schema names and tables. */
export {
  type AvailabilityOptions,
  DatabaseAvailability,
  isConnectionError,
} from "../availability.js";
export {
  type ConnectOptions,
  connect,
  derivePool,
  type LaneHooks,
  lanesHoldSessions,
  openLane,
  type Sql,
  throughPooler,
} from "../connect.js";
export { connectToRole } from "../connect-role.js";
export { databaseHosts, databaseUrlProblem, socketOf } from "../connect-url.js";
export { DatabaseUrlSchema, parseEnv, resolveSecretKeys, SharedEnvSchema } from "../env.js";
export { isDataException } from "../errors.js";
export { surviveLostConnections } from "../lost-connections.js";
export {
  assertSchemaName,
  bossSchemaFor,
  brainSchemaProblem,
  quoteIdent,
  SCHEMA_NAME_PATTERN,
} from "../schema-name.js";
export { bindDistributed, bindSchema, type Relation, schemaOf, type Tables, tables } from "../tables.js";

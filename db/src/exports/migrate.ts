/** @aexhq/brain-db/migrate: Migrations, the grants of a runtime role, placement on a Citus cluster. */
export {
  citusInstalled,
  DISTRIBUTED,
  distributedOnCitus,
  placedOnCitus,
  placeOnCitus,
  REFERENCE,
} from "../citus.js";
export { delegatesOnCitus } from "../citus-delegation.js";
export { loadMigrations, MIGRATIONS_DIR, type Migration, migrate, migrateRights } from "../migrate.js";
export {
  appliedVersions,
  bossInstalled,
  grantScript,
  migrationScript,
  pendingMigrations,
  roleNameProblem,
} from "../migrate-script.js";
export { MAX_PARAMETERS, statementOf } from "../ops/on-session-shards.js";

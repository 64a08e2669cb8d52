/** @aexhq/brain-db/migrate: Migrations and the grants of a runtime role. */
export { loadMigrations, MIGRATIONS_DIR, type Migration, migrate, migrateRights } from "../migrate.js";
export {
  appliedVersions,
  bossInstalled,
  grantScript,
  migrationScript,
  pendingMigrations,
  roleNameProblem,
} from "../migrate-script.js";

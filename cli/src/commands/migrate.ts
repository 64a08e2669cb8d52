import { parseArgs } from "node:util";
import {
  appliedVersions,
  bossInstalled,
  loadMigrations,
  migrate,
  migrationScript,
  pendingMigrations,
  startBoss,
} from "@aexhq/brain-db";
import type { CliEnv } from "../config.js";
import { withDatabase } from "../database.js";
import { out, printJson } from "../output.js";

/**
 * `brain migrate`: applies Brain's migrations and installs pg-boss's schema (what a server does
 * on start). `--print-sql` prints that SQL instead, for deploys whose application role cannot run
 * DDL: only what this database lacks, or everything with `--all` (no database needed).
 */
export async function migrateCommand(args: string[], env: CliEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { "print-sql": { type: "boolean" }, all: { type: "boolean" }, json: { type: "boolean" } },
    strict: true,
  });
  if (values["print-sql"]) {
    if (values.all) {
      process.stdout.write(migrationScript(env.schema, loadMigrations(), true));
      return 0;
    }
    const script = await withDatabase(env, async (sql) =>
      migrationScript(
        env.schema,
        pendingMigrations(await appliedVersions(sql, env.schema)),
        !(await bossInstalled(sql, env.schema)),
      ),
    );
    process.stdout.write(script);
    return 0;
  }
  const result = await withDatabase(env, async (sql, url) => {
    const applied = await migrate(sql, env.schema);
    // pg-boss installs (or upgrades) its schema on start; its queues get Brain's settings.
    const boss = await startBoss(url, env.schema, () => {}, { listen: false });
    await boss.stop({ graceful: false, timeout: 1000 });
    return { schema: env.schema, applied, version: loadMigrations().length };
  });
  if (values.json) printJson(result);
  else
    out(
      result.applied.length === 0
        ? `schema ${result.schema} is up to date (version ${result.version}); pg-boss ready`
        : `applied ${result.applied.join(", ")} to schema ${result.schema} (version ${result.version}); pg-boss ready`,
    );
  return 0;
}

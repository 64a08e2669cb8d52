import { parseArgs } from "node:util";
import {
  appliedVersions,
  bossInstalled,
  citusInstalled,
  grantScript,
  loadMigrations,
  migrate,
  migrationScript,
  pendingMigrations,
  placeOnCitus,
  roleNameProblem,
} from "@aexhq/brain-db/migrate";
import { startBoss } from "@aexhq/brain-db/queue";
import type { CliEnv } from "../config.js";
import { withDatabase } from "../database.js";
import { CliError, UsageError } from "../errors.js";
import { out, printJson } from "../output.js";

/**
 * `brain migrate`: applies Brain's migrations and installs pg-boss's schema (what a server does
 * on start). `--print-sql` prints that SQL instead, for deploys whose application role cannot run
 * DDL: only what this database lacks, or everything with `--all` (no database needed).
 * `--grant-to ROLE` gives a runtime role what it needs (printed with `--print-sql`, else applied).
 * `--citus` then distributes the tables on a Citus cluster (docs/scaling.md), idempotently.
 */
export async function migrateCommand(args: string[], env: CliEnv): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      "print-sql": { type: "boolean" },
      all: { type: "boolean" },
      json: { type: "boolean" },
      "grant-to": { type: "string" },
      citus: { type: "boolean" },
    },
    strict: true,
  });
  const role = values["grant-to"];
  const problem = role === undefined ? null : roleNameProblem(role);
  if (problem) throw new UsageError(`--grant-to: ${problem}`);
  const grants = role === undefined ? "" : grantScript(env.schema, role);
  if (values.citus && values["print-sql"])
    throw new UsageError("--citus places tables on a live cluster: not with --print-sql");
  if (values["print-sql"]) {
    if (values.all) {
      process.stdout.write(migrationScript(env.schema, loadMigrations(), true) + grants);
      return 0;
    }
    const script = await withDatabase(env, async (sql) =>
      migrationScript(
        env.schema,
        pendingMigrations(await appliedVersions(sql, env.schema)),
        !(await bossInstalled(sql, env.schema)),
      ),
    );
    process.stdout.write(script + grants);
    return 0;
  }
  const result = await withDatabase(env, async (sql) => {
    if (values.citus && !(await citusInstalled(sql))) {
      throw new CliError("--citus: this database has no citus extension (CREATE EXTENSION citus on the coordinator)");
    }
    const applied = await migrate(sql, env.schema);
    // pg-boss installs (or upgrades) its schema on start; its queues get Brain's settings.
    const boss = await startBoss(sql, env.schema, () => {}, { listen: false });
    await boss.stop({ graceful: false, timeout: 1000 });
    if (grants) await sql.unsafe(grants);
    const citus = values.citus ? { distributed: await placeOnCitus(sql, env.schema) } : {};
    return {
      schema: env.schema,
      applied,
      version: loadMigrations().length,
      ...(role ? { grantedTo: role } : {}),
      ...citus,
    };
  });
  if (values.json) printJson(result);
  else
    out(
      result.applied.length === 0
        ? `schema ${result.schema} is up to date (version ${result.version}); pg-boss ready`
        : `applied ${result.applied.join(", ")} to schema ${result.schema} (version ${result.version}); pg-boss ready`,
    );
  if (!values.json && result.distributed !== undefined)
    out(
      result.distributed
        ? "tables distributed on the Citus cluster"
        : "tables already distributed on the Citus cluster",
    );
  if (!values.json && role)
    out(`granted ${role} what a server and a worker need on ${env.schema} and ${env.schema}_boss`);
  return 0;
}

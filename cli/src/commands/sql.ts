import { spawn } from "node:child_process";
import type { CliEnv } from "../config.js";
import { databaseUrl } from "../database.js";
import { CliError } from "../errors.js";

/**
 * `brain sql [-- psql args]`: psql on the configured (or embedded) database, with Brain's schema
 * first on the search_path, so `SELECT * FROM journal` works as documented. On BRAIN_DIRECT_URL
 * when set: a pooler in transaction mode refuses the search_path and keeps no session.
 */
export async function sqlCommand(args: string[], env: CliEnv): Promise<number> {
  const psqlArgs = args[0] === "--" ? args.slice(1) : args;
  const db = await databaseUrl(env);
  try {
    return await new Promise<number>((resolve, reject) => {
      const child = spawn("psql", [env.directUrl ?? db.url, ...psqlArgs], {
        stdio: "inherit",
        env: { ...process.env, PGOPTIONS: `${process.env.PGOPTIONS ?? ""} -c search_path=${env.schema},public`.trim() },
      });
      child.once("error", (error: NodeJS.ErrnoException) =>
        reject(
          error.code === "ENOENT"
            ? new CliError(
                "psql is not installed (or not on PATH): install the PostgreSQL client, e.g. `apt-get install postgresql-client` or `brew install libpq`",
              )
            : error,
        ),
      );
      child.once("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
    });
  } finally {
    await db.stop();
  }
}

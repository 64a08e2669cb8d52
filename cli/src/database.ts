import { join } from "node:path";
import { connect, connectToRole, isConnectionError, type Sql } from "@aexhq/brain-db/connect";
import { runningEmbeddedUrl, startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import type { CliEnv } from "./config.js";
import { CliError } from "./errors.js";

/**
 * The database a command works on: DATABASE_URL, else the embedded Postgres of a running
 * `brain start` on BRAIN_DATA_DIR, else that embedded Postgres started for the command alone.
 */
export async function databaseUrl(env: CliEnv): Promise<{ url: string; stop(): Promise<void> }> {
  if (env.databaseUrl) return { url: env.databaseUrl, stop: async () => {} };
  const dir = join(env.dataDir, "pg");
  // The same password file as the server's (see server/src/database.ts).
  const passwordFile = join(env.dataDir, "pg-password");
  const running = await runningEmbeddedUrl(dir, passwordFile);
  if (running) return { url: running, stop: async () => {} };
  const pg = await startEmbeddedPostgres({ dataDir: dir, passwordFile, log: () => {} });
  return { url: pg.url, stop: () => pg.stop() };
}

/** Runs `work` with a small pool on Brain's schema; a database that cannot be reached is a failure. */
export async function withDatabase<T>(env: CliEnv, work: (sql: Sql, url: string) => Promise<T>): Promise<T> {
  const db = await databaseUrl(env);
  let sql: Sql;
  try {
    // Fitted to the role and to a pooler in front, as a server's pool is.
    sql = await connectToRole(db.url, {
      schema: env.schema,
      max: 3,
      applicationName: "brain-cli",
      ...(env.databasePasswordFile && env.databaseUrl ? { passwordFile: env.databasePasswordFile } : {}),
      ...(env.directUrl ? { directUrl: env.directUrl } : {}),
    });
  } catch (error) {
    await db.stop();
    throw new CliError(`database unreachable: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    return await work(sql, db.url);
  } finally {
    await sql.end({ timeout: 2 });
    await db.stop();
  }
}

/**
 * Runs `work` on BRAIN_READ_URL's replica (what it shows may lag), or as withDatabase does
 * without one.
 */
export async function withReadDatabase<T>(env: CliEnv, work: (sql: Sql) => Promise<T>): Promise<T> {
  if (!env.readUrl) return withDatabase(env, work);
  const sql = openReplica(env.readUrl, env.schema);
  try {
    return await work(sql);
  } catch (error) {
    if (isConnectionError(error))
      throw new CliError(`read replica unreachable: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** A small read-only pool on BRAIN_READ_URL's replica (any server, statements unprepared). */
export function openReplica(readUrl: string, schema: string): Sql {
  return connect(readUrl, { schema, max: 2, applicationName: "brain-cli", readOnly: true });
}

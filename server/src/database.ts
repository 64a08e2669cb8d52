import { join } from "node:path";
import { connectToRole, type Sql } from "@aexhq/brain-db/connect";
import { startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import { migrate } from "@aexhq/brain-db/migrate";
import type { Config } from "./config.js";

export interface PreparedDatabase {
  url: string;
  sql: Sql;
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * The configured Postgres, or an embedded one under the data directory when DATABASE_URL is not
 * set; migrated before anything else touches it.
 */
export async function prepareDatabase(config: Config, log: (line: string) => void): Promise<PreparedDatabase> {
  const embedded = config.databaseUrl
    ? null
    : await startEmbeddedPostgres({
        dataDir: join(config.dataDir, "pg"),
        passwordFile: join(config.dataDir, "pg-password"),
        log: (line) => log(`postgres: ${line}`),
      });
  const url = config.databaseUrl ?? embedded!.url;
  let sql: Sql | undefined;
  try {
    sql = await connectToRole(url, {
      schema: config.schema,
      max: 20,
      applicationName: "brain-server",
      // The embedded cluster's password is in its URL.
      ...(config.databasePasswordFile && !embedded ? { passwordFile: config.databasePasswordFile } : {}),
      ...(config.directUrl && !embedded ? { directUrl: config.directUrl } : {}),
    });
    await migrate(sql, config.schema);
  } catch (error) {
    await sql?.end({ timeout: 1 });
    await embedded?.stop();
    throw error;
  }
  const pool = sql;
  return {
    url,
    sql: pool,
    embedded: embedded !== null,
    async close() {
      await pool.end({ timeout: 5 });
      await embedded?.stop();
    },
  };
}

import type { Sql } from "postgres";
import { createRunDatabase, dropRunDatabase, enablePgStatStatements, plainSql, withDatabase } from "./database.js";

/** One scenario run's own database. */
export interface ScenarioDatabase {
  name: string;
  url: string;
  /** A connection to it, for baselines and for reading journals back. */
  sql: Sql;
  /** pg_stat_statements is on in it (the server preloads it and the extension was created). */
  pgStatStatements: boolean;
}

/**
 * Gives every scenario run a fresh database and drops it afterwards. A scenario leaves sessions
 * active (a thousand of them after `session_memory`, one of 10,000 records after `journal_size`),
 * and a later server resumes every active session without a live owner: in one shared database
 * that work fell into the next scenario's warm-up, and each scenario measured a journal the ones
 * before it had grown. Dropping a database also checkpoints, so a scenario's dirty pages are
 * written before the next one measures rather than during it.
 */
export class ScenarioDatabases {
  private readonly open = new Set<ScenarioDatabase>();

  constructor(
    private readonly adminUrl: string,
    private readonly options: { keep: boolean; pgStatStatements: boolean; log: (line: string) => void },
  ) {}

  /** Runs `use` against a database created for it, dropped when it settles (kept with `--keep-db`). */
  async with<T>(use: (db: ScenarioDatabase) => Promise<T>): Promise<T> {
    const name = await createRunDatabase(this.adminUrl);
    const url = withDatabase(this.adminUrl, name);
    const db: ScenarioDatabase = { name, url, sql: plainSql(url, 4), pgStatStatements: false };
    this.open.add(db);
    try {
      db.pgStatStatements = this.options.pgStatStatements && (await enablePgStatStatements(db.sql));
      return await use(db);
    } finally {
      await this.close(db);
    }
  }

  /** Drops what is still open (a run interrupted mid-scenario). */
  async closeAll(): Promise<void> {
    await Promise.all([...this.open].map((db) => this.close(db)));
  }

  private async close(db: ScenarioDatabase): Promise<void> {
    if (!this.open.delete(db)) return;
    await db.sql.end().catch(() => {});
    if (this.options.keep) {
      this.options.log(`bench: kept database ${db.url} (--keep-db)`);
      return;
    }
    await dropRunDatabase(this.adminUrl, db.name).catch((err: unknown) =>
      this.options.log(`bench: could not drop ${db.name}: ${String(err)}`),
    );
  }
}

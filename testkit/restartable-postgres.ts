import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import postgres from "postgres";

/**
 * A Postgres cluster of a test's own, which it may restart, crash and cut connections of: the
 * shared test server must never be restarted under other test files. Embedded binaries, a fresh
 * data directory, the same port across restarts (clients reconnect to the URL they have).
 */
export interface RestartablePostgres {
  url: string;
  /** Stops (fast: clean; immediate: crash, recovery on start) and starts again on the same port. */
  restart(mode: "fast" | "immediate", downMs?: number): Promise<void>;
  /** Stops until `start()`. */
  stop(mode?: "fast" | "immediate"): Promise<void>;
  start(): Promise<void>;
  /** pg_terminate_backend on every backend whose application_name starts with `prefix`; how many. */
  terminate(prefix: string): Promise<number>;
  /** Stops the cluster for good and removes its data directory. */
  destroy(): Promise<void>;
}

export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const dir = mkdtempSync(join(tmpdir(), "brain-pg-restart-"));
  const dataDir = join(dir, "data");
  let pg: EmbeddedPostgres | null = await startEmbeddedPostgres({ dataDir });
  const port = pg.port;
  const url = pg.url;
  const start = async () => {
    pg ??= await startEmbeddedPostgres({ dataDir, port });
  };
  const stop = async (mode: "fast" | "immediate" = "fast") => {
    const current = pg;
    pg = null;
    await current?.stop(mode);
  };
  return {
    url,
    start,
    stop,
    async restart(mode, downMs = 0) {
      await stop(mode);
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      await start();
    },
    async terminate(prefix) {
      const admin = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const rows = await admin<{ ok: boolean }[]>`
          SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE application_name LIKE ${`${prefix}%`} AND pid <> pg_backend_pid()`;
        return rows.filter((r) => r.ok).length;
      } finally {
        await admin.end({ timeout: 1 });
      }
    },
    async destroy() {
      await stop("fast");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

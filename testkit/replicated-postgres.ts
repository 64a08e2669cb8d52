import { execFileSync } from "node:child_process";
import { appendFileSync, chownSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import postgres from "postgres";
import { until } from "./wait.js";

/**
 * A primary and a synchronous streaming standby of a test's own, on loopback, as a managed
 * Postgres runs them: the standby is a copy of the primary's data directory taken after a clean
 * shutdown (a base backup without pg_basebackup, which the embedded binaries lack), and the primary
 * waits for it on every commit (`synchronous_standby_names = 'standby'`, which the copy inherits:
 * promoted, it waits for a standby that is gone until told otherwise).
 */
export interface ReplicatedPostgres {
  primaryUrl: string;
  standbyUrl: string;
  /** One URL naming both, the standby first, for whoever must find the writable one. */
  bothUrl(database?: string): string;
  /** Kills the primary (immediate shutdown: a crash). */
  killPrimary(): Promise<void>;
  /** pg_promote() on the standby; resolves once it accepts writes. */
  promote(): Promise<void>;
  /** The standby stops receiving WAL: what the primary commits from now on, it never gets. */
  cutStandby(): Promise<void>;
  /** A superuser connection to the standby (the primary after promote()). */
  standby: postgres.Sql;
  /** A superuser connection to the primary. */
  primary: postgres.Sql;
  destroy(): Promise<void>;
}

const PASSWORD = "password"; // the embedded clusters' fixed password (no password file given)

/** `synchronous: false`: the primary does not wait for the standby (a commit may be lost with it). */
export async function startReplicatedPostgres(options: { synchronous?: boolean } = {}): Promise<ReplicatedPostgres> {
  const synchronous = options.synchronous ?? true;
  const dir = mkdtempSync(join(tmpdir(), "brain-pg-replicated-"));
  const primaryDir = join(dir, "primary");
  const standbyDir = join(dir, "standby");
  let first: EmbeddedPostgres | null = await startEmbeddedPostgres({ dataDir: primaryDir });
  const port = first.port;
  const setup = postgres(first.url, { max: 1, onnotice: () => {} });
  if (synchronous) await setup`ALTER SYSTEM SET synchronous_standby_names = 'standby'`;
  await setup.end({ timeout: 1 });
  await first.stop("fast");
  first = null;
  execFileSync("cp", ["-a", primaryDir, standbyDir]);
  const owner = statSync(primaryDir);
  const signal = join(standbyDir, "standby.signal");
  writeFileSync(signal, "");
  chownSync(signal, owner.uid, owner.gid);
  appendFileSync(
    join(standbyDir, "postgresql.auto.conf"),
    `primary_conninfo = 'host=127.0.0.1 port=${port} user=postgres password=${PASSWORD} application_name=standby'\n`,
  );
  let primaryPg: EmbeddedPostgres | null = await startEmbeddedPostgres({ dataDir: primaryDir, port });
  const standbyPg = await startEmbeddedPostgres({ dataDir: standbyDir });
  const primary = postgres(primaryPg.url, { max: 1, onnotice: () => {} });
  const standby = postgres(standbyPg.url, { max: 1, onnotice: () => {} });
  await until(
    "the standby to stream",
    async () => {
      const rows = await primary<{ s: string }[]>`SELECT sync_state AS s FROM pg_stat_replication`;
      return rows[0]?.s === (synchronous ? "sync" : "async");
    },
    60_000,
  );
  return {
    primaryUrl: primaryPg.url,
    standbyUrl: standbyPg.url,
    bothUrl: (database = "postgres") =>
      `postgres://postgres:${PASSWORD}@127.0.0.1:${standbyPg.port},127.0.0.1:${port}/${database}?target_session_attrs=read-write`,
    primary,
    standby,
    async killPrimary() {
      await primary.end({ timeout: 0 }).catch(() => {});
      await primaryPg?.stop("immediate");
      primaryPg = null;
    },
    async promote() {
      await standby`SELECT pg_promote(true, 60)`;
      await until("the promoted standby to accept writes", async () => {
        const [row] = await standby<{ r: boolean }[]>`SELECT pg_is_in_recovery() AS r`;
        return row?.r === false;
      });
    },
    async cutStandby() {
      await standby`ALTER SYSTEM SET primary_conninfo = ''`;
      await standby`SELECT pg_reload_conf()`;
      await until("the standby's WAL receiver to stop", async () => {
        const rows = await primary<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_replication`;
        return rows[0]?.n === 0;
      });
    },
    async destroy() {
      await primary.end({ timeout: 0 }).catch(() => {});
      await standby.end({ timeout: 0 }).catch(() => {});
      await primaryPg?.stop("fast");
      await standbyPg.stop("fast");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

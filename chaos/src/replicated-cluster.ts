// `--failover`: a primary and a synchronous streaming standby of the run's own, on loopback, as a
// managed Postgres runs them. The standby is a copy of the primary's data directory taken after a
// clean shutdown (a base backup; the embedded binaries have no pg_basebackup), and the primary
// waits for it on every commit. Brain gets one URL naming both, the standby first, with
// target_session_attrs=read-write; the fail-over kills the primary and promotes the standby.
import { execFileSync } from "node:child_process";
import { appendFileSync, chownSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import postgres from "postgres";
import { type Cluster, pgCtlPath, postgresIds, run } from "./cluster.js";

export interface ReplicatedCluster extends Cluster {
  /** Kills the primary (immediate), promotes the standby and lets it commit alone; what it took. */
  failover(): Promise<string>;
}

export async function startReplicatedCluster(dir: string): Promise<ReplicatedCluster> {
  const primaryDir = join(dir, "pg");
  const standbyDir = join(dir, "pg-standby");
  const first = await startEmbeddedPostgres({ dataDir: primaryDir });
  const primaryUrl = new URL(first.url);
  await first.stop();
  // The primary waits for the standby on every commit: an acknowledged write is on both.
  appendFileSync(join(primaryDir, "postgresql.auto.conf"), "synchronous_standby_names = 'standby'\n");
  execFileSync("cp", ["-a", primaryDir, standbyDir]);
  const owner = statSync(primaryDir);
  const signal = join(standbyDir, "standby.signal");
  writeFileSync(signal, "");
  chownSync(signal, owner.uid, owner.gid);
  const { port, password } = primaryUrl;
  appendFileSync(
    join(standbyDir, "postgresql.auto.conf"),
    `primary_conninfo = 'host=127.0.0.1 port=${port} user=postgres password=${decodeURIComponent(password)} application_name=standby'\n`,
  );
  const standbyPort = await freePort();
  const ids = postgresIds();
  const logFile = join(primaryDir, "chaos-postgres.log");
  const ctl = (dataDir: string, args: string[]) => run(pgCtlPath(), [...args, "-D", dataDir, "-t", "60"], ids);
  const start = (dataDir: string, p: string, log: string) =>
    ctl(dataDir, ["start", "-w", "-l", log, "-o", `-p ${p} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`]);
  await start(primaryDir, port, logFile);
  await start(standbyDir, String(standbyPort), join(standbyDir, "chaos-postgres.log"));
  const standbyUrl = new URL(primaryUrl);
  standbyUrl.port = String(standbyPort);
  await waitForSync(primaryUrl.toString());
  let failedOver = false;
  const stopAll = () => {
    for (const d of [primaryDir, standbyDir]) {
      try {
        execFileSync(pgCtlPath(), ["stop", "-D", d, "-m", "immediate"], { ...ids, stdio: "ignore" });
      } catch {}
    }
  };
  process.once("exit", stopAll);
  const both = `postgres://postgres:${password}@127.0.0.1:${standbyPort},127.0.0.1:${port}/postgres?target_session_attrs=read-write`;
  return {
    url: both,
    logFile,
    restart: () =>
      Promise.reject(new Error("a replicated cluster is not restarted: --failover runs pg faults of its own")),
    async failover() {
      const started = Date.now();
      await ctl(primaryDir, ["stop", "-m", "immediate"]);
      const promoted = postgres(standbyUrl.toString(), { max: 1, onnotice: () => {} });
      try {
        await promoted`SELECT pg_promote(true, 60)`;
        // Promoted, it still waits for a standby named 'standby', now gone: a managed service
        // would attach another; here it commits alone.
        await promoted`ALTER SYSTEM SET synchronous_standby_names = ''`;
        await promoted`SELECT pg_reload_conf()`;
      } finally {
        await promoted.end({ timeout: 1 });
      }
      failedOver = true;
      return `primary killed, standby promoted in ${Date.now() - started} ms`;
    },
    async stop() {
      process.off("exit", stopAll);
      if (!failedOver) await ctl(primaryDir, ["stop", "-w", "-m", "fast"]).catch(() => {});
      await ctl(standbyDir, ["stop", "-w", "-m", "fast"]).catch(() => ctl(standbyDir, ["stop", "-m", "immediate"]));
    },
  };
}

async function waitForSync(primaryUrl: string): Promise<void> {
  const sql = postgres(primaryUrl, { max: 1, onnotice: () => {} });
  try {
    for (let waited = 0; waited < 60_000; waited += 100) {
      const rows = await sql<{ s: string }[]>`SELECT sync_state AS s FROM pg_stat_replication`;
      if (rows[0]?.s === "sync") return;
      await sleep(100);
    }
    throw new Error("the standby did not stream synchronously within 60 s");
  } finally {
    await sql.end({ timeout: 1 });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject()));
    });
  });
}

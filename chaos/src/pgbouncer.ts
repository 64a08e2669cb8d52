import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * PgBouncer (Debian's, 1.18 here) in front of a Postgres, in transaction mode: the mode Supabase,
 * Neon and most managed setups use, which keeps no session state between transactions, loses
 * named prepared statements (before 1.21) and refuses startup parameters it does not know
 * (`search_path`). It logs into Postgres as the upstream URL's user, whoever the client is.
 */
export interface PgBouncer {
  port: number;
  /** `url` (a URL of the upstream Postgres) with its host and port replaced by PgBouncer's. */
  through(url: string): string;
  /** PgBouncer's log so far. */
  log(): string;
  stop(): Promise<void>;
}

const BINARIES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"];

export function pgBouncerBinary(): string | undefined {
  return BINARIES.find((path) => existsSync(path));
}

export async function startPgBouncer(upstreamUrl: string): Promise<PgBouncer> {
  const binary = pgBouncerBinary();
  if (!binary) throw new Error("pgbouncer is not installed: `apt-get install -y pgbouncer` (scripts/test-needs.mjs)");
  const upstream = new URL(upstreamUrl);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "brain-pgbouncer-"));
  const ini = join(dir, "pgbouncer.ini");
  const user = decodeURIComponent(upstream.username);
  const password = decodeURIComponent(upstream.password);
  writeFileSync(
    ini,
    [
      "[databases]",
      `* = host=${upstream.hostname} port=${upstream.port || 5432} user=${user}${password ? ` password=${password}` : ""}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = any",
      "pool_mode = transaction",
      "max_client_conn = 1000",
      "default_pool_size = 40",
      "max_db_connections = 80",
      // What postgres.js sends at start beside application_name; search_path is not ignored.
      "ignore_startup_parameters = extra_float_digits",
      // After Postgres restarts, logins fail for this long (15 s by default) before another try.
      "server_login_retry = 1",
      `logfile = ${join(dir, "pgbouncer.log")}`,
      `pidfile = ${join(dir, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  chmodSync(dir, 0o755);
  // PgBouncer refuses to run as root: then it runs as the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, ...postgresIds());
  const child = spawn(binary, asRoot ? ["-u", "postgres", ini] : [ini], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  await waitForPort(port, child, () => stderr);
  return {
    port,
    log: () => (existsSync(join(dir, "pgbouncer.log")) ? readFileSync(join(dir, "pgbouncer.log"), "utf8") : ""),
    through(url) {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGINT");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresIds(): [number, number] {
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  return [uid, gid];
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${output()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("connect", () => resolve(true)).once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1");
    }).catch(() => false);
    if (open) return;
    if (Date.now() > until) throw new Error(`pgbouncer did not listen on ${port}: ${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

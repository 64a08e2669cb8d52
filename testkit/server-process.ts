import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { directEnvFor } from "./database.js";
import { LOOPBACK_EGRESS_ENV } from "./egress.js";
import { TEST_SECRET_KEY } from "./secrets.js";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The line the server prints once it accepts connections; its URL is group 1. */
export const LISTENING = /^Brain listening on (http:\/\/\S+)$/m;

export type Env = Record<string, string | undefined>;

/** A real `node` child process whose output is captured. */
export interface NodeProcess {
  pid: number;
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr interleaved as they arrived. */
  output(): string;
  /**
   * Resolves with the match once a complete line on stdout or stderr matches `pattern` (a
   * non-global regex; use the `m` flag with ^ and $). Rejects with the output so far when the
   * process exits first or `timeoutMs` passes.
   */
  waitForLine(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Settles when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (a crash, by default) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** SIGTERM, then SIGKILL if it has not exited within 5 s; waits for the exit. */
  stop(): Promise<void>;
}

export interface ServerProcess extends NodeProcess {
  /** Base URL, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Its BRAIN_API_TOKEN. */
  token: string;
  /** Its BRAIN_DATA_DIR; kept after it exits, so a test can restart a server on it. */
  dataDir: string;
}

export interface SpawnServerOptions {
  databaseUrl: string;
  /** Added to (and overriding) the defaults; an undefined value removes a variable. */
  env?: Env;
  /** BRAIN_API_TOKEN; random unless given. */
  token?: string;
  /** How long to wait for the listening line; default 20 s. */
  startTimeoutMs?: number;
}

/** Spawns `node server/dist/main.js` on a free port and resolves once it is listening. */
export async function spawnServer(options: SpawnServerOptions): Promise<ServerProcess> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const dataDir = options.env?.BRAIN_DATA_DIR ?? tempDir("brain-server-");
  const server = spawnNode("server/dist/main.js", {
    env: {
      DATABASE_URL: options.databaseUrl,
      ...(await directEnvFor(options.databaseUrl)),
      BRAIN_PORT: "0",
      BRAIN_HOST: "127.0.0.1",
      BRAIN_API_TOKEN: token,
      BRAIN_DATA_DIR: dataDir,
      BRAIN_SECRET_KEY: TEST_SECRET_KEY,
      ...options.env,
    },
  });
  try {
    const [, url] = await server.waitForLine(LISTENING, options.startTimeoutMs ?? 20_000);
    return { ...server, url: url ?? "", token, dataDir };
  } catch (error) {
    await server.kill();
    throw error;
  }
}

export interface SpawnNodeOptions {
  /** Added to (and overriding) this process's environment; an undefined value removes a variable. */
  env?: Env;
  args?: string[];
  /** Default: the repository root, which relative script paths are resolved against too. */
  cwd?: string;
}

/**
 * Spawns `node <scriptPath> ...args` with captured output; killed when this process exits. Brain
 * processes it starts reach loopback (LOOPBACK_EGRESS_ENV), where tests serve what they call.
 */
export function spawnNode(scriptPath: string, options: SpawnNodeOptions = {}): NodeProcess {
  const script = isAbsolute(scriptPath) ? scriptPath : join(REPO_ROOT, scriptPath);
  const env = Object.fromEntries(
    Object.entries({ ...process.env, ...LOOPBACK_EGRESS_ENV, ...options.env }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  const child = spawn(process.execPath, [script, ...(options.args ?? [])], {
    cwd: options.cwd ?? REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not spawn node ${script}`);
  track(child);
  const streams = { stdout: "", stderr: "", all: "" };
  child.stdout?.on("data", (chunk: Buffer) => {
    streams.stdout += chunk;
    streams.all += chunk;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    streams.stderr += chunk;
    streams.all += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) => {
    child.once("exit", (code, signal) => done({ code, signal }));
  });
  const hasExited = () => child.exitCode !== null || child.signalCode !== null;
  const label = `node ${scriptPath} (pid ${child.pid})`;

  const waitForLine = (pattern: RegExp, timeoutMs = 10_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      // Only whole lines: a chunk can end mid-line, and `$` with the m flag matches at the end.
      const find = () =>
        [streams.stdout, streams.stderr]
          .map((text) => text.slice(0, text.lastIndexOf("\n") + 1).match(pattern))
          .find((match) => match !== null);
      const finish = (error?: Error, match?: RegExpMatchArray) => {
        clearTimeout(timer);
        child.stdout?.off("data", onData);
        child.stderr?.off("data", onData);
        child.off("close", onClose);
        if (match) resolve(match);
        else reject(error);
      };
      const onData = () => {
        const match = find();
        if (match) finish(undefined, match);
      };
      const onClose = () => {
        const match = find();
        if (match) finish(undefined, match);
        else
          finish(
            new Error(`${label} exited (${child.exitCode ?? child.signalCode}) before printing ${pattern}${dump()}`),
          );
      };
      const dump = () => `\n--- output ---\n${streams.all}\n--- end ---`;
      const timer = setTimeout(
        () => finish(new Error(`${label}: no line matching ${pattern} in ${timeoutMs} ms${dump()}`)),
        timeoutMs,
      );
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      // "close" comes after the output is fully read, so the error shows all of it.
      child.once("close", onClose);
      onData();
      if (hasExited() && child.stdout?.readableEnded && child.stderr?.readableEnded) onClose();
    });

  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    if (hasExited()) return;
    child.kill(signal);
    await exited;
  };
  const stop = async () => {
    if (hasExited()) return;
    const escalate = setTimeout(() => child.kill("SIGKILL"), 5_000);
    child.kill("SIGTERM");
    await exited;
    clearTimeout(escalate);
  };
  return { pid: child.pid, child, output: () => streams.all, waitForLine, exited, kill, stop };
}

// Whatever a test leaves running dies with the test process, and its temp dirs are removed.
const running = new Set<ChildProcess>();
const tempDirs: string[] = [];
let hooked = false;

function track(child: ChildProcess): void {
  hook();
  running.add(child);
  child.once("exit", () => running.delete(child));
}

function tempDir(prefix: string): string {
  hook();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

/**
 * On exit, and on the signals that end a process without an exit event: vitest stops its fork
 * workers with SIGTERM. After cleaning up, the signal is raised again for its default action.
 */
function hook(): void {
  if (hooked) return;
  hooked = true;
  const cleanup = () => {
    for (const child of running) child.kill("SIGKILL");
    running.clear();
    for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", cleanup);
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
    process.once(signal, () => {
      cleanup();
      process.kill(process.pid, signal);
    });
  }
}

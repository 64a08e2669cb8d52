import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CpuUse } from "../measure/stats.js";

export interface ServerProcess {
  pid: number;
  url: string;
  token: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM (the server's graceful shutdown, which also writes a --cpu-prof profile), then SIGKILL. */
  stop(): Promise<void>;
}

const LISTENING = /^Brain listening on (http:\/\/\S+)$/m;

/**
 * The V8 flags the server runs with in production: the ones `npm start` passes (the root
 * package.json's `start` script, `node <flags> cli/bin/brain.js start`), which docs/architecture.md tells every
 * other launch to pass too.
 */
export function serverNodeFlags(root: string): string[] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts?: { start?: string } };
  const m = /^node\s+(.*?)\s*cli\/bin\/brain\.js start$/.exec(pkg.scripts?.start ?? "");
  if (!m) throw new Error("package.json's start script is not `node <flags> cli/bin/brain.js start`");
  return m[1] ? m[1].split(/\s+/) : [];
}

/**
 * How the Brain server runs: `server`, `node server/dist/main.js` (a server alone, as the
 * `brain-server` bin runs it); `start`, `brain start` (the server with a worker in its process, as
 * `npm start` runs it); the server's V8 flags either way (serverNodeFlags).
 */
export type ServerEntry = "server" | "start";

/** Starts the server as production would (see ServerEntry), and resolves once it listens. */
export async function spawnServer(options: {
  root: string;
  databaseUrl: string;
  token: string;
  dataDir: string;
  entry?: ServerEntry;
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<ServerProcess> {
  const entry =
    options.entry === "start"
      ? [join(options.root, "cli/bin/brain.js"), "start"]
      : [join(options.root, "server/dist/main.js")];
  const args = [...serverNodeFlags(options.root), ...(options.nodeArgs ?? []), ...entry];
  const child = spawn(process.execPath, args, {
    cwd: options.root,
    env: {
      ...process.env,
      DATABASE_URL: options.databaseUrl,
      BRAIN_PORT: "0",
      BRAIN_HOST: "127.0.0.1",
      BRAIN_API_TOKEN: options.token,
      BRAIN_LOG_LEVEL: "warn",
      BRAIN_DATA_DIR: options.dataDir,
      ...options.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error("could not spawn the Brain server");
  track(child);
  let out = "";
  if (process.env.BENCH_VERBOSE === "1") {
    child.stdout?.on("data", (c: Buffer) => process.stderr.write(c));
    child.stderr?.on("data", (c: Buffer) => process.stderr.write(c));
  }
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the server did not start in 30 s:\n${out}`)), 30_000);
    const onData = (chunk: Buffer) => {
      out += chunk;
      const m = out.match(LISTENING);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code ?? signal}) before listening:\n${out}`));
    });
  });
  return {
    pid: child.pid,
    url,
    token: options.token,
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
      child.kill("SIGTERM");
      await exited;
      clearTimeout(kill);
    },
  };
}

const running = new Set<ChildProcess>();
let hooked = false;

/** Whatever the suite started dies with it, however it ends. */
export function track(child: ChildProcess): void {
  if (!hooked) {
    hooked = true;
    process.once("exit", () => {
      for (const c of running) c.kill("SIGKILL");
    });
  }
  running.add(child);
  child.once("exit", () => running.delete(child));
}

/** VmRSS and VmHWM of a process, in KiB, from /proc/<pid>/status. */
export function memoryOf(pid: number): { rssKiB: number; hwmKiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+) kB`, "m"))?.[1] ?? Number.NaN);
  return { rssKiB: field("VmRSS"), hwmKiB: field("VmHWM") };
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU seconds (user + system) a process has used, from /proc/<pid>/stat; 0 if it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return 0;
  }
}

/**
 * The local postgres processes that work for `database`: its backends, plus the cluster's own
 * processes (WAL writer, checkpointer, …) that every commit relies on. Backends of other databases
 * (other people's tests on a shared machine) are left out; they count as "other".
 */
export function postgresPids(database: string | undefined): number[] {
  if (!existsSync("/proc")) return [];
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() !== "postgres") continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ");
      // A backend's title is "postgres: [cluster: ]user database client state".
      const backend = /\d+\.\d+\.\d+\.\d+\(\d+\)|\[local\]/.test(cmd);
      if (!backend || database === undefined || cmd.includes(` ${database} `)) pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/**
 * CPU seconds used so far by one Postgres server (its postmaster, named in `dataDir`'s
 * postmaster.pid, and the processes it started); 0 when it is not running. Backends that ended
 * since are not counted: measure servers whose clients keep their connections.
 */
export function serverCpuSeconds(dataDir: string): number {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return 0;
  }
  let total = cpuSecondsOf(postmaster);
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === postmaster) total += cpuSecondsOf(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

/** Busy CPU seconds of the whole machine, from /proc/stat. */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0) + (steal ?? 0)) / clockTicks();
  } catch {
    return 0;
  }
}

/**
 * Samples the CPU time of named processes, of this database's postgres processes (counting
 * backends that come and go) and of the whole machine between `start()` and `stop()`; reports
 * cores used by each, and by everything else on the machine as "other".
 */
export class CpuMeter {
  private started: {
    at: number;
    byName: Map<string, number>;
    pg: Map<number, number>;
    machine: number;
  } | null = null;
  private result: CpuUse | undefined;

  constructor(
    private readonly processes: () => Record<string, number>,
    private readonly database?: string,
  ) {}

  start(): void {
    const byName = new Map(Object.entries(this.processes()).map(([name, pid]) => [name, cpuSecondsOf(pid)]));
    const pg = new Map(postgresPids(this.database).map((pid) => [pid, cpuSecondsOf(pid)]));
    this.started = { at: performance.now(), byName, pg, machine: machineBusySeconds() };
    this.result = undefined;
  }

  stop(): CpuUse | undefined {
    const s = this.started;
    if (!s) return this.result;
    this.started = null;
    const seconds = (performance.now() - s.at) / 1000;
    const use: CpuUse = {};
    let ours = 0;
    for (const [name, pid] of Object.entries(this.processes())) {
      const used = cpuSecondsOf(pid) - (s.byName.get(name) ?? 0);
      ours += used;
      use[name] = round2(used / seconds);
    }
    let pg = 0;
    for (const pid of postgresPids(this.database)) pg += cpuSecondsOf(pid) - (s.pg.get(pid) ?? 0);
    ours += pg;
    use.postgres = round2(pg / seconds);
    use.other = round2(Math.max(0, machineBusySeconds() - s.machine - ours) / seconds);
    this.result = use;
    return use;
  }

  get last(): CpuUse | undefined {
    return this.result;
  }
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

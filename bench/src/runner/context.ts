import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sql } from "postgres";
import { ActivitySampler } from "../measure/activity.js";
import type { Figure } from "../measure/stats.js";
import { type HopStep, HopWindow, hopFigures, hopProbe, readHops } from "../probes/hops.js";
import type { InitArgs } from "../scenarios/host-protocol.js";
import { resetStatements, type StatementStat, topStatements } from "./database.js";
import { CpuMeter, type ServerEntry, type ServerProcess, spawnServer } from "./proc.js";
import { type Child, forkChild } from "./rpc.js";

export interface BenchOptions {
  quick: boolean;
  /** Scenario names to run; null = all. */
  only: Set<string> | null;
  /** Run the Brain server under `node --cpu-prof`; profiles go to bench/results/profiles. */
  cpuProf: boolean;
  /**
   * Sample what the Brain server and the host allocate during each measured window (V8's sampling
   * heap profiler, alloc-probe.ts): `<process>-<scenario>.heapprofile` in bench/results/profiles.
   */
  allocProf: boolean;
  /** Keep the run's database for EXPLAIN ANALYZE afterwards (useful with DATABASE_URL: an embedded Postgres stops with the run). */
  keepDb: boolean;
  /** Sample pg_stat_activity of the server's backends while each Brain scenario measures. */
  sampleActivity: boolean;
  /** Time the hops of the sequential scenarios' paths (hops.ts): figures `<scenario> hop · a → b`. */
  traceHops: boolean;
  /** Where to write the JSON. */
  out: string;
  /**
   * On a shared machine: before each scenario, wait up to this many seconds for the rest of the
   * machine to go quiet (under a quarter of a core busy for 5 s). 0 = don't wait.
   */
  waitQuietSeconds: number;
  /**
   * Runs a scenario again (up to this many times) when other processes used more than 0.3 cores
   * while it measured, keeping the quietest run.
   */
  retryBusy: number;
  /** The pg-boss worker's batchSize and localConcurrency (see BENCHMARKS.md for why 16 × 1). */
  pgboss: { batchSize: number; localConcurrency: number };
  /** The graphile-worker worker's concurrency, localQueue.size (≤ 1 = off) and completeJobBatchDelay (ms, -1 = off). */
  graphile: { concurrency: number; localQueueSize: number; completeJobBatchDelay: number };
  /** Concurrent sessions at each level of tool_scaling. */
  scalingSessions: number[];
  /** `--warmup`: seconds of load before a sustained rate is measured (see sustainedWarmupMs); null = default. */
  warmupSeconds: number | null;
  /** `--rounds`: the scenarios run this many times, interleaved; ratios are medians (see rounds.ts). */
  rounds: number;
  /** `--server`: how Brain's server runs (see ServerEntry). */
  serverEntry: ServerEntry;
}

/**
 * The warm-up of every scenario that measures a sustained rate, under the load it measures (Brain's
 * throughput scenarios, the bare stack's, pg-boss's and graphile-worker's). A full run warms up
 * for 10 s: V8 keeps optimising a process's hot code for about that long under this load (the
 * Brain server's compiler threads used a third of its CPU 3 s in, under a tenth after 10 s), and a
 * server runs for days, so the window measures the steady state rather than the first seconds.
 */
export function sustainedWarmupMs(ctx: Pick<BenchOptions, "quick" | "warmupSeconds">): number {
  if (ctx.warmupSeconds !== null) return ctx.warmupSeconds * 1000;
  return ctx.quick ? 1_000 : 10_000;
}

export interface BenchContext extends BenchOptions {
  root: string;
  /** The run's own database. */
  databaseUrl: string;
  /** Its name. */
  database: string;
  /** A connection to it, for baselines and for reading journals back. */
  sql: Sql;
  pgStatStatements: boolean;
  log(line: string): void;
  /** Starts a Brain server and a host application, each its own process. */
  startBrain(scenario: string, options?: BrainOptions): Promise<BrainUnderTest>;
}

/** How a scenario's Brain server is started. */
export interface BrainOptions {
  /** Preload server-probe.ts (post-GC heap readings on SIGUSR2) and expose gc. */
  probe?: boolean;
  /** Server environment on top of the bench's own (e.g. a BRAIN_* setting the scenario measures). */
  env?: Record<string, string>;
  /** A sequential path (one call at a time): with `--trace-hops`, its steps join the figures. */
  hops?: boolean;
}

export interface ScenarioResult {
  figures: Figure[];
  /** pg_stat_activity of the server's backends while measuring (`--sample-activity`). */
  activity?: Record<string, number>;
  /** Top statements by execution time while the scenario measured (when pg_stat_statements is on). */
  statements?: StatementStat[];
}

export interface Scenario {
  name: string;
  /** Baselines run first; they are what the others are compared with. */
  baseline?: boolean;
  /** How long it may run before it counts as hung (default 60 s with --quick, 300 s without). */
  timeoutMs?(quick: boolean): number;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

export interface BrainUnderTest {
  server: ServerProcess;
  /** The operator token the server was started with. */
  token: string;
  host: Child;
  /** CPU of server, host and Postgres between the host's "start" and "end" marks. */
  cpu: CpuMeter;
  /** Resets pg_stat_statements (when on); `statements()` then reads the top ones. */
  resetStatements(): Promise<void>;
  statements(): Promise<StatementStat[] | undefined>;
  /** What the activity sampler saw during the last start/end marks, if it ran. */
  activity(): Promise<Record<string, number> | undefined>;
  /** Stops both processes; resolves with the warnings and errors the server logged. */
  close(): Promise<string[]>;
  /** With `--trace-hops` on a sequential path, once closed: the steps of its measured window. */
  hops(): HopStep[] | undefined;
}

/** `node --cpu-prof` arguments for a process of the run (with `--cpu-prof`), else none. */
export function profileArgs(ctx: Pick<BenchContext, "cpuProf" | "root">, name: string): string[] {
  if (!ctx.cpuProf) return [];
  const dir = profilesDir(ctx);
  return ["--cpu-prof", `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}.cpuprofile`];
}

/**
 * With `--alloc-prof`, what a process of the run needs to sample its allocations (alloc-probe.ts):
 * the probe preloaded, and where it writes its profile; else nothing.
 */
export function allocProbe(
  ctx: Pick<BenchContext, "allocProf" | "root">,
  name: string,
): { args: string[]; env: NodeJS.ProcessEnv } {
  if (!ctx.allocProf) return { args: [], env: {} };
  const file = join(profilesDir(ctx), `${name}.heapprofile`);
  rmSync(file, { force: true });
  return {
    args: ["--import", new URL("../probes/alloc-probe.js", import.meta.url).href],
    env: { BENCH_ALLOC_PROFILE: file },
  };
}

/**
 * With `--alloc-prof`, a mark listener that tells the processes' probes when the measured window
 * opens and closes (SIGUSR2 each time), and writes its length beside each profile
 * (`<name>.heapprofile.window.json`, seconds) for alloc-summary's bytes per second.
 */
export function allocWindow(
  ctx: Pick<BenchContext, "allocProf" | "root">,
  processes: { name: string; pid: number }[],
): (mark: string) => void {
  let start = 0;
  return (mark) => {
    if (!ctx.allocProf || (mark !== "start" && mark !== "end")) return;
    for (const p of processes) process.kill(p.pid, "SIGUSR2");
    if (mark === "start") start = performance.now();
    else {
      const seconds = (performance.now() - start) / 1000;
      for (const p of processes) {
        writeFileSync(join(profilesDir(ctx), `${p.name}.heapprofile.window.json`), JSON.stringify({ seconds }));
      }
    }
  };
}

function profilesDir(ctx: Pick<BenchContext, "root">): string {
  const dir = join(ctx.root, "bench/results/profiles");
  mkdirSync(dir, { recursive: true });
  // Profiles are large and per machine: keep them out of git without touching .gitignore.
  writeFileSync(join(dir, ".gitignore"), "*\n");
  return dir;
}

/**
 * With `--cpu-prof`, a mark listener that writes the last measured window (between a "start" and
 * an "end" mark) beside each named profile, as `<name>.cpuprofile.window.json`: microseconds of
 * the monotonic clock, which is the clock of V8's profiles. profile-summary then counts only
 * that window, without the scenario's setup and teardown.
 */
export function profileWindow(ctx: Pick<BenchContext, "cpuProf" | "root">, names: string[]): (mark: string) => void {
  let start = 0;
  return (mark) => {
    if (!ctx.cpuProf) return;
    const now = Number(process.hrtime.bigint() / 1000n);
    if (mark === "start") start = now;
    if (mark !== "end") return;
    for (const name of names) {
      const file = join(ctx.root, "bench/results/profiles", `${name}.cpuprofile.window.json`);
      writeFileSync(file, JSON.stringify({ start, end: now }));
    }
  };
}

export async function startBrain(
  ctx: Omit<BenchContext, "startBrain">,
  scenario: string,
  options: BrainOptions = {},
): Promise<BrainUnderTest> {
  const nodeArgs = profileArgs(ctx, `server-${scenario}`);
  const hostArgs = profileArgs(ctx, `host-${scenario}`);
  // Both probes answer SIGUSR2: the memory probe's scenarios are not profiled for allocations.
  const allocProf = ctx.allocProf && !options.probe;
  const serverAlloc = allocProbe({ root: ctx.root, allocProf }, `server-${scenario}`);
  const hostAlloc = allocProbe({ root: ctx.root, allocProf }, `host-${scenario}`);
  const traced = ctx.traceHops && options.hops === true;
  // In the profiles' directory, which keeps them out of git.
  const hopDir = traced ? profilesDir(ctx) : null;
  const serverHops = hopProbe(hopDir, `server-${scenario}`);
  const hostHops = hopProbe(hopDir, `host-${scenario}`);
  nodeArgs.push(...serverAlloc.args, ...serverHops.args);
  hostArgs.push(...hostAlloc.args, ...hostHops.args);
  if (options.probe) {
    nodeArgs.push("--expose-gc", "--import", new URL("../probes/server-probe.js", import.meta.url).href);
  }
  const dataDir = mkdtempSync(join(tmpdir(), "brain-bench-server-"));
  const token = randomBytes(24).toString("base64url");
  const server = await spawnServer({
    root: ctx.root,
    databaseUrl: ctx.databaseUrl,
    token,
    dataDir,
    entry: ctx.serverEntry,
    nodeArgs,
    env: { ...options.env, ...serverAlloc.env, ...serverHops.env },
  });
  const host = forkChild(new URL("../scenarios/host.js", import.meta.url).pathname, {
    execArgv: hostArgs,
    env: { ...hostAlloc.env, ...hostHops.env },
  });
  const hopWindow = new HopWindow();
  if (traced) host.onMark(hopWindow.onMark);
  // The runner itself is "bench": it is idle while measuring, except for the activity sampler.
  const cpu = new CpuMeter(() => ({ server: server.pid, host: host.pid, bench: process.pid }), ctx.database);
  const sampler = ctx.sampleActivity ? new ActivitySampler(ctx.databaseUrl, ctx.database) : undefined;
  let sampled: Promise<Record<string, number>> | undefined;
  host.onMark(profileWindow(ctx, [`server-${scenario}`, `host-${scenario}`]));
  if (allocProf) {
    host.onMark(
      allocWindow(ctx, [
        { name: `server-${scenario}`, pid: server.pid },
        { name: `host-${scenario}`, pid: host.pid },
      ]),
    );
  }
  host.onMark((m) => {
    if (m === "start") {
      cpu.start();
      sampler?.start();
    }
    if (m === "end") {
      cpu.stop();
      sampled = sampler?.stop();
    }
  });
  try {
    await host.call("init", { url: server.url, token } satisfies InitArgs);
  } catch (error) {
    await host.stop();
    await server.stop();
    throw error;
  }
  return {
    server,
    token,
    host,
    cpu,
    async resetStatements() {
      if (ctx.pgStatStatements) await resetStatements(ctx.sql);
    },
    async activity() {
      return sampled;
    },
    hops() {
      if (!serverHops.file || !hostHops.file) return undefined;
      return readHops({ server: serverHops.file, host: hostHops.file }, hopWindow);
    },
    async statements() {
      return ctx.pgStatStatements ? topStatements(ctx.sql) : undefined;
    },
    async close() {
      await host.call("close").catch(() => {});
      await host.stop();
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
      return server
        .output()
        .split("\n")
        .filter((line) => /"level":(40|50|60)/.test(line) || (/^brain: /.test(line) && !/shutting down/.test(line)))
        .map((line) => line.slice(0, 600));
    },
  };
}

/** Runs `measure` against a fresh server and host; the server's warnings join the result. */
export async function withBrain(
  ctx: BenchContext,
  scenario: string,
  options: BrainOptions,
  measure: (brain: BrainUnderTest) => Promise<Figure[]>,
): Promise<ScenarioResult> {
  const brain = await ctx.startBrain(scenario, options);
  let figures: Figure[];
  let statements: StatementStat[] | undefined;
  let activity: Record<string, number> | undefined;
  try {
    figures = await measure(brain);
    statements = await brain.statements();
    activity = await brain.activity();
  } finally {
    await closeKeepingWarnings(ctx.log, scenario, brain);
  }
  const hops = brain.hops();
  if (hops) figures.push(...hopFigures(scenario, hops));
  return { figures, ...(statements ? { statements } : {}), ...(activity ? { activity } : {}) };
}

/** Stops a server and its host, and keeps what the server logged under `name`. */
export async function closeKeepingWarnings(
  log: (line: string) => void,
  name: string,
  brain: BrainUnderTest,
): Promise<void> {
  const warnings = await brain.close();
  if (warnings.length > 0) {
    log(`  the server logged ${warnings.length} warning(s)/error(s) during ${name}; first: ${warnings[0]}`);
    serverWarnings.set(name, warnings);
  }
}

/** Warnings and errors the server logged, by scenario. */
export const serverWarnings = new Map<string, string[]>();

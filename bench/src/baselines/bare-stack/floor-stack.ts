import { ActivitySampler } from "../../measure/activity.js";
import { type Figure, latency, rate } from "../../measure/stats.js";
import {
  type BenchContext,
  profileArgs,
  profileWindow,
  type Scenario,
  type ScenarioResult,
  sustainedWarmupMs,
} from "../../runner/context.js";
import { resetStatements, topStatements } from "../../runner/database.js";
import { CpuMeter } from "../../runner/proc.js";
import { type Child, forkChild } from "../../runner/rpc.js";
import {
  STACK_APPLICATION,
  type StackServerArgs,
  type StackThroughputArgs,
  type StackThroughputResult,
} from "./stack-protocol.js";
import { databaseNow, stackRoundtrips } from "./stack-roundtrips.js";

/**
 * The floor of Brain's own stack: the same libraries (Fastify, @fastify/websocket, postgres.js, ws,
 * node:http) in a server and a host process, doing only the I/O a durable turn needs (see
 * stack-server.ts) with none of Brain's logic. Brain's figures divided by these say what Brain's
 * own code costs; these divided by the physical floors (floor_commit, floor_http) say what the
 * libraries and processes cost before any of it.
 */
export const floorStack: Scenario = {
  name: "floor_stack",
  baseline: true,
  run: (ctx) => withStack(ctx, "floor_stack", "bare"),
};

/**
 * The bare stack writing Brain's journal: the same processes, protocol and load as floor_stack,
 * each commit made by Brain's own journal statements through its JournalWriter (stack-journal.ts:
 * the records, call rows, budgets, fencing and wake window Brain's server writes for these turns).
 * What Brain's journal alone costs each path, with no Agentloop, actors or validation around it:
 * Brain's figures against these say what the rest of Brain costs; these against the bare stack's
 * what the journal's statements cost.
 */
export const floorStackJournal: Scenario = {
  name: "floor_stack_journal",
  baseline: true,
  run: (ctx) => withStack(ctx, "floor_stack_journal", "brain"),
};

/** Starts the stack's server and host (profiled as `name`), measures every path, and stops both. */
async function withStack(
  ctx: BenchContext,
  name: string,
  journal: NonNullable<StackServerArgs["journal"]>,
): Promise<ScenarioResult> {
  const server = forkChild(new URL("./stack-server.js", import.meta.url).pathname, {
    execArgv: profileArgs(ctx, `server-${name}`),
  });
  const host = forkChild(new URL("./stack-host.js", import.meta.url).pathname, {
    execArgv: profileArgs(ctx, `host-${name}`),
  });
  const cpu = new CpuMeter(() => ({ server: server.pid, host: host.pid }), ctx.database);
  host.onMark((m) => (m === "start" ? cpu.start() : cpu.stop()));
  host.onMark(profileWindow(ctx, [`server-${name}`, `host-${name}`]));
  // Each path's window starts afresh, so the statements and activity read at the end are the
  // throughput's.
  const resets: Promise<void>[] = [];
  if (ctx.pgStatStatements) host.onMark((m) => m === "start" && resets.push(resetStatements(ctx.sql).catch(() => {})));
  const sampler = ctx.sampleActivity
    ? new ActivitySampler(ctx.databaseUrl, ctx.database, [STACK_APPLICATION[journal], "brain-writer"])
    : undefined;
  let sampled: Promise<Record<string, number>> | undefined;
  if (sampler) {
    host.onMark((m) => {
      if (m === "start") sampler.start();
      if (m === "end") sampled = sampler.stop();
    });
  }
  try {
    const args: StackServerArgs = { url: ctx.databaseUrl, channel: "bench_stack", journal };
    const { port } = await server.call<{ port: number }>("start", args);
    await host.call("connect", { port });
    const figures = await measure(ctx, name, journal, host, cpu);
    const activity = await sampled;
    await Promise.all(resets);
    const statements = ctx.pgStatStatements ? await topStatements(ctx.sql) : undefined;
    return { figures, ...(statements ? { statements } : {}), ...(activity ? { activity } : {}) };
  } finally {
    await host.call("close").catch(() => {});
    await server.call("stop").catch(() => {});
    await host.stop();
    await server.stop();
  }
}

async function measure(
  ctx: BenchContext,
  name: string,
  journal: NonNullable<StackServerArgs["journal"]>,
  host: Child,
  cpu: CpuMeter,
): Promise<Figure[]> {
  const n = ctx.quick ? 300 : 1_000;
  const figures: Figure[] = [];
  const turns = await host.call<number[]>("turns", { n, warmup: 100 });
  figures.push(
    latency(`${name}.turn_text`, turns, {
      note: "POST → user message committed → answer committed → HTTP answer",
      cpu: cpu.last,
    }),
  );
  const since = await databaseNow(ctx.sql);
  const dispatch = await host.call<number[]>("dispatch", { n, warmup: 100 });
  const roundtrips = await stackRoundtrips(ctx.sql, journal, since, n);
  figures.push(
    latency(`${name}.dispatch`, dispatch, {
      note: "a call's intent sent to its commit → invoke frame on the host's socket (tool_dispatch.to_host_socket's path)",
      cpu: cpu.last,
    }),
    latency(`${name}.call_roundtrip`, roundtrips, {
      note: "tool_call_started → tool_call_ended created_at, read from the stack's journal (turn_one_tool.call_roundtrip's span)",
    }),
  );
  const emits = await host.call<number[]>("emits", { n, warmup: 100 });
  figures.push(
    latency(`${name}.emit`, emits, {
      note: "WebSocket frame → one emission committed → ack frame",
      cpu: cpu.last,
    }),
  );
  const args: StackThroughputArgs = {
    sessions: 64,
    warmupMs: sustainedWarmupMs(ctx),
    durationMs: ctx.quick ? 3_000 : 10_000,
  };
  const r = await host.call<StackThroughputResult>("throughput", args);
  figures.push(
    rate(`${name}.throughput`, "calls/s", r.calls, r.windowSeconds, {
      note: "tool_throughput's load (64 sessions, 4 calls a turn in 2 rounds) on the stack",
      cpu: cpu.last,
    }),
    rate(`${name}.turns`, "turns/s", r.turns, r.windowSeconds),
  );
  return figures;
}

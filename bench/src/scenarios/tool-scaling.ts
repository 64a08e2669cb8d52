import { type CpuUse, type Figure, latency, rate } from "../measure/stats.js";
import type { BenchContext, BrainUnderTest, Scenario } from "../runner/context.js";
import { closeKeepingWarnings, sustainedWarmupMs, withBrain } from "../runner/context.js";
import type { ThroughputArgs, ThroughputResult } from "./host-protocol.js";

/**
 * Turns scripted per session at each level: enough for the whole warm-up and window at the
 * per-session turn rate that level reaches (a turn is ~20 ms alone, slower as sessions share the
 * machine); a session that runs out is reported as exhausted, never silently.
 */
function maxTurns(sessions: number, quick: boolean): number {
  const base = sessions <= 1 ? 600 : sessions <= 8 ? 300 : sessions <= 64 ? 150 : 40;
  return quick ? base : base * 3;
}

function throughputArgs(ctx: BenchContext, sessions: number): ThroughputArgs {
  // Past ~100 sessions a turn (4 calls) takes longer than tool_throughput's window: warm up for at
  // least one turn of every session and measure for several, or no turn latency fits the window.
  const many = sessions > 100;
  return {
    sessions,
    warmupMs: Math.max(sustainedWarmupMs(ctx), many ? (ctx.quick ? 4_000 : 6_000) : 0),
    durationMs: ctx.quick ? (many ? 8_000 : 3_000) : many ? 20_000 : 10_000,
    maxTurns: maxTurns(sessions, ctx.quick),
  };
}

function problemsOf(r: ThroughputResult): string | undefined {
  const problems = [...r.anomalies];
  if (r.exhausted > 0) problems.unshift(`${r.exhausted} session(s) ran out of script`);
  return problems.length > 0 ? `ANOMALIES: ${problems.slice(0, 5).join("; ")}` : undefined;
}

/**
 * How throughput grows with concurrency: tool_throughput's shape (each turn calls 4 tools in 2
 * rounds of 2, one host connection) at 1, 8, 64 and 512 concurrent sessions
 * (`--scaling-sessions`), one level after another on one server, each with its own warm-up.
 */
export const toolScaling: Scenario = {
  name: "tool_scaling",
  timeoutMs: (quick) => (quick ? 120_000 : 400_000),
  run: (ctx) =>
    withBrain(ctx, "tool_scaling", {}, async (brain) => {
      const figures: Figure[] = [];
      for (const sessions of ctx.scalingSessions) {
        const args = throughputArgs(ctx, sessions);
        const r = await brain.host.call<ThroughputResult>("throughput", args);
        const name = `tool_scaling.sessions_${sessions}`;
        figures.push(
          rate(name, "calls/s", r.calls, r.windowSeconds, {
            note: problemsOf(r) ?? `${sessions} concurrent sessions, ${args.durationMs / 1000} s window`,
            cpu: brain.cpu.last,
          }),
          latency(`${name}.turn`, r.turnMs, { note: "turn latency at that concurrency" }),
        );
      }
      return figures;
    }),
};

/**
 * Two Brain servers on one database, each with its own host application (its own process), 32
 * sessions on each (64 in all, as tool_throughput), measured over the same window: the aggregate
 * tool calls per second. Each session runs on the server it was created through.
 */
export const twoServers: Scenario = {
  name: "two_servers",
  async run(ctx) {
    const a = await ctx.startBrain("two_servers_a");
    let b: BrainUnderTest | undefined;
    try {
      b = await ctx.startBrain("two_servers_b");
      const args = throughputArgs(ctx, 32);
      const second = b;
      const [ra, rb] = await Promise.all([
        a.host.call<ThroughputResult>("throughput", args),
        second.host.call<ThroughputResult>("throughput", args),
      ]);
      const note = problemsOf(ra) ?? problemsOf(rb) ?? "2 servers × 32 sessions, each server with its own host";
      return {
        figures: [
          rate("two_servers", "calls/s", ra.calls + rb.calls, ra.windowSeconds, { note, cpu: combined(a, b) }),
          rate("two_servers.server_a", "calls/s", ra.calls, ra.windowSeconds),
          rate("two_servers.server_b", "calls/s", rb.calls, rb.windowSeconds),
          latency("two_servers.turn", [...ra.turnMs, ...rb.turnMs], { note: "turn latency under that load" }),
        ],
      };
    } finally {
      if (b) await closeKeepingWarnings(ctx.log, "two_servers_b", b);
      await closeKeepingWarnings(ctx.log, "two_servers_a", a);
    }
  },
};

/** Both pairs' CPU; Postgres once (each meter sees all of the database's backends). */
function combined(a: BrainUnderTest, b: BrainUnderTest): CpuUse | undefined {
  const x = a.cpu.last;
  const y = b.cpu.last;
  if (!x || !y) return undefined;
  const theirs = (y.server ?? 0) + (y.host ?? 0);
  return {
    server_a: x.server ?? 0,
    server_b: y.server ?? 0,
    hosts: (x.host ?? 0) + (y.host ?? 0),
    postgres: x.postgres ?? 0,
    other: Math.max(0, Math.round(((x.other ?? 0) - theirs) * 100) / 100),
  };
}

import { profileArgs, profileWindow, type Scenario, sustainedWarmupMs } from "./context.js";
import { CpuMeter } from "./proc.js";
import { forkChild } from "./rpc.js";
import type { StackThroughputArgs, StackThroughputResult } from "./stack-protocol.js";
import { type Figure, latency, rate } from "./stats.js";

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
  async run(ctx) {
    const server = forkChild(new URL("./stack-server.js", import.meta.url).pathname, {
      execArgv: profileArgs(ctx, "server-floor_stack"),
    });
    const host = forkChild(new URL("./stack-host.js", import.meta.url).pathname, {
      execArgv: profileArgs(ctx, "host-floor_stack"),
    });
    const cpu = new CpuMeter(() => ({ server: server.pid, host: host.pid }), ctx.database);
    host.onMark((m) => (m === "start" ? cpu.start() : cpu.stop()));
    host.onMark(profileWindow(ctx, ["server-floor_stack", "host-floor_stack"]));
    try {
      const { port } = await server.call<{ port: number }>("start", { url: ctx.databaseUrl, channel: "bench_stack" });
      await host.call("connect", { port });
      const n = ctx.quick ? 300 : 1_000;
      const figures: Figure[] = [];
      const turns = await host.call<number[]>("turns", { n, warmup: 100 });
      figures.push(
        latency("floor_stack.turn_text", turns, {
          note: "POST → user message committed → answer committed → HTTP answer; Brain's libraries, none of its logic",
          cpu: cpu.last,
        }),
      );
      await server.call("roundtrips", { record: true });
      const dispatch = await host.call<number[]>("dispatch", { n, warmup: 100 });
      const roundtrips = (await server.call<number[]>("roundtrips", { record: false })).slice(-n);
      figures.push(
        latency("floor_stack.dispatch", dispatch, {
          note: "a call's intent sent to its commit → invoke frame on the host's socket (tool_dispatch.to_host_socket's path)",
          cpu: cpu.last,
        }),
        latency("floor_stack.call_roundtrip", roundtrips, {
          note: "a call's intent sent to its commit → its result sent to its commit (turn_one_tool.call_roundtrip's span)",
        }),
      );
      const emits = await host.call<number[]>("emits", { n, warmup: 100 });
      figures.push(
        latency("floor_stack.emit", emits, {
          note: "WebSocket frame → one record committed → ack frame",
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
        rate("floor_stack.throughput", "calls/s", r.calls, r.windowSeconds, {
          note: "tool_throughput's load (64 sessions, 4 calls a turn in 2 rounds) on the bare stack",
          cpu: cpu.last,
        }),
        rate("floor_stack.turns", "turns/s", r.turns, r.windowSeconds),
      );
      return { figures };
    } finally {
      await host.call("close").catch(() => {});
      await server.call("stop").catch(() => {});
      await host.stop();
      await server.stop();
    }
  },
};

import { latency, rate } from "../measure/stats.js";
import { type Scenario, sustainedWarmupMs } from "../runner/context.js";
import { CpuMeter } from "../runner/proc.js";
import { forkChild } from "../runner/rpc.js";
import type { DbosArgs, Sustained } from "./dbos-app.js";

const LANES = 64;

/**
 * The same work as a durable workflow of DBOS Transact (the system a team would pick for durable
 * execution on Postgres): a workflow with one step per call, on the same Postgres, in an
 * application process of its own (dbos-app.ts). Round trip: the workflow started and its result
 * returned, sequential; then calls completed per second with 64 in flight, for the same window as
 * tool_throughput. DBOS runs the step in the process that started the workflow, so there is no
 * hop to another process: a call of Brain crosses two (server, host).
 */
export const dbosRoundtrip: Scenario = {
  name: "dbos_roundtrip",
  baseline: true,
  async run(ctx) {
    const app = forkChild(new URL("./dbos-app.js", import.meta.url).pathname);
    try {
      await app.call("start", { url: ctx.databaseUrl, schema: "bench_dbos" } satisfies DbosArgs);
      await app.call("sequential", { n: 100 });
      const cpu = new CpuMeter(() => ({ app: app.pid }), ctx.database);
      cpu.start();
      const samples = await app.call<number[]>("sequential", { n: ctx.quick ? 200 : 1_000 });
      cpu.stop();
      const warmupMs = sustainedWarmupMs(ctx);
      const windowMs = ctx.quick ? 3_000 : 10_000;
      const startTimer = setTimeout(() => cpu.start(), warmupMs);
      const stopTimer = setTimeout(() => cpu.stop(), warmupMs + windowMs);
      const sequentialCpu = cpu.last;
      const load = await app.call<Sustained>("sustained", { lanes: LANES, warmupMs, windowMs });
      clearTimeout(startTimer);
      clearTimeout(stopTimer);
      cpu.stop();
      return {
        figures: [
          latency("dbos_roundtrip", samples, {
            note: "startWorkflow (one step) → getResult, in the application's process; sequential",
            cpu: sequentialCpu,
          }),
          rate("dbos_roundtrip.throughput", "calls/s", load.completed, windowMs / 1000, {
            note: `${LANES} workflows in flight`,
            cpu: cpu.last,
          }),
          latency("dbos_roundtrip.under_load", load.underLoad, { note: `round trip with ${LANES} in flight` }),
        ],
      };
    } finally {
      await app.call("stop").catch(() => {});
      await app.stop();
    }
  },
};

import { connect } from "@aexhq/brain-db/connect";
import { citusBuilt, joinCitusDatabase, startCitusCluster } from "@aexhq/brain-db/embedded";
import { migrate, placeOnCitus } from "@aexhq/brain-db/migrate";
import { latency, rate, value } from "../measure/stats.js";
import { type Scenario, startBrain, sustainedWarmupMs, withBrain } from "../runner/context.js";
import { serverCpuSeconds } from "../runner/proc.js";
import type { ThroughputArgs, ThroughputResult } from "./host-protocol.js";

/**
 * tool_throughput's load (64 sessions on one host connection, 4 tools a turn in 2 rounds) on a
 * Citus cluster of its own on this machine: a coordinator and two workers, Citus's 32 shards a
 * table, Brain's tables distributed (`brain migrate --citus`). Beside tool_throughput on one
 * Postgres it measures what distribution costs on one machine, not what more machines bring:
 * the three nodes share its cores. Not measured where Citus is not installed (vendor/citus).
 */
export const citus: Scenario = {
  name: "citus",
  timeoutMs: (quick) => (quick ? 180_000 : 420_000),
  async run(ctx) {
    if (!citusBuilt()) {
      ctx.log("bench: citus not measured: Citus is not installed (vendor/citus/build.sh installs it)");
      return { figures: [] };
    }
    const cluster = await startCitusCluster();
    const name = "brain_bench_citus";
    const admin = connect(cluster.url, { schema: "public", max: 1 });
    try {
      await admin.unsafe(`CREATE DATABASE ${name}`);
      await joinCitusDatabase(cluster.url, cluster.workerUrls, name);
      const url = new URL(cluster.url);
      url.pathname = `/${name}`;
      const sql = connect(url.toString(), { schema: "brain", max: 4 });
      await migrate(sql, "brain");
      await placeOnCitus(sql, "brain");
      const base = { ...ctx, databaseUrl: url.toString(), database: name, sql, pgStatStatements: false };
      const onCluster = { ...base, startBrain: (scenario: string) => startBrain(base, scenario) };
      try {
        return await withBrain(onCluster, "citus", {}, async (brain) => {
          const args: ThroughputArgs = {
            sessions: 64,
            warmupMs: sustainedWarmupMs(ctx),
            durationMs: ctx.quick ? 3_000 : 10_000,
            maxTurns: ctx.quick ? 150 : 400,
          };
          const nodes = nodeCpu(cluster.dataDirs);
          const r = await brain.host.call<ThroughputResult>("throughput", args);
          const cores = nodes.stop();
          const note = r.anomalies.length > 0 ? `ANOMALIES: ${r.anomalies.slice(0, 5).join("; ")}` : undefined;
          const perSecond = r.calls / r.windowSeconds;
          return [
            rate("citus", "calls/s", r.calls, r.windowSeconds, {
              note: note ?? "tool_throughput's load; a coordinator and 2 workers on this machine, 32 shards",
              cpu: brain.cpu.last,
            }),
            latency("citus.turn", r.turnMs, { note: "turn latency under that load" }),
            ...cores.map((c, i) =>
              value(
                i === 0 ? "citus.coordinator_ms" : `citus.worker${i - 1}_ms`,
                "ms",
                r.calls,
                (c * 1000) / perSecond,
                {
                  note: `this node's CPU per tool call (${c.toFixed(2)} cores over warm-up and window)`,
                },
              ),
            ),
          ];
        });
      } finally {
        await sql.end({ timeout: 1 });
      }
    } finally {
      await admin.end({ timeout: 1 });
      await cluster.destroy();
    }
  },
};

/** Cores each node of the cluster used from now until stop(), its Postgres processes' CPU over the wall time. */
function nodeCpu(dataDirs: readonly string[]): { stop(): number[] } {
  const at = performance.now();
  const before = dataDirs.map(serverCpuSeconds);
  return {
    stop() {
      const seconds = (performance.now() - at) / 1000;
      return dataDirs.map((dir, i) => (serverCpuSeconds(dir) - before[i]!) / seconds);
    },
  };
}

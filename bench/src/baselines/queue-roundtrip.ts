import { randomUUID } from "node:crypto";
import { type Figure, latency, rate } from "../measure/stats.js";
import { type BenchContext, sustainedWarmupMs } from "../runner/context.js";
import { plainSql } from "../runner/database.js";
import { CpuMeter } from "../runner/proc.js";

/** A job queue under test: how to send a job under an id the sender chose. */
export interface QueueUnderTest {
  /** Figure name prefix, e.g. `pgboss_roundtrip`. */
  name: string;
  /** Postgres NOTIFY channel on which the worker's completing transaction announces job ids (comma-separated). */
  channel: string;
  send(id: string, i: number): Promise<unknown>;
  /** Processes whose CPU is reported (sender = this process, worker = the worker's process). */
  processes: () => Record<string, number>;
  /** What the throughput figure's note says about the worker's configuration. */
  workerNote: string;
}

/**
 * The shared shape of the queue baselines (pg-boss, graphile-worker): round trip of one job
 * (send → a worker in another process completes it → the sender hears of the durable completion
 * through a NOTIFY issued inside the completing transaction), sequential; then jobs completed per
 * second with 64 senders in flight, for the same window as tool_throughput. The sender registers
 * for a job's completion before sending it, under an id it chose, so no completion can be missed.
 */
export async function measureQueue(ctx: BenchContext, queue: QueueUnderTest): Promise<Figure[]> {
  const listener = plainSql(ctx.databaseUrl, 1);
  const waiters = new Map<string, (at: number) => void>();
  try {
    await listener.listen(queue.channel, (payload) => {
      const at = performance.now();
      for (const id of payload.split(",")) {
        waiters.get(id)?.(at);
        waiters.delete(id);
      }
    });
    const call = async (i: number): Promise<number> => {
      const id = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      const done = new Promise<number>((resolve, reject) => {
        waiters.set(id, resolve);
        timer = setTimeout(() => reject(new Error(`${queue.name}: job ${id} not completed within 30 s`)), 30_000);
      });
      const t0 = performance.now();
      await queue.send(id, i);
      try {
        return (await done) - t0;
      } finally {
        clearTimeout(timer);
      }
    };
    for (let i = 0; i < 100; i++) await call(i);
    const n = ctx.quick ? 200 : 1_000;
    const cpu = new CpuMeter(queue.processes, ctx.database);
    cpu.start();
    const samples: number[] = [];
    for (let i = 0; i < n; i++) samples.push(await call(i));
    cpu.stop();
    const figures: Figure[] = [
      latency(queue.name, samples, {
        note: "send → worker completes (NOTIFY in the completing tx) → sender hears; sequential",
        cpu: cpu.last,
      }),
    ];

    const lanes = 64;
    const warmupMs = sustainedWarmupMs(ctx);
    const windowMs = ctx.quick ? 3_000 : 10_000;
    const start = performance.now() + warmupMs;
    const end = start + windowMs;
    let completed = 0;
    const underLoad: number[] = [];
    const startTimer = setTimeout(() => cpu.start(), warmupMs);
    const stopTimer = setTimeout(() => cpu.stop(), warmupMs + windowMs);
    await Promise.all(
      Array.from({ length: lanes }, async (_, lane) => {
        for (let i = 0; performance.now() < end; i++) {
          const t0 = performance.now();
          const ms = await call(lane * 1_000_000 + i);
          const t1 = performance.now();
          if (t1 >= start && t1 <= end) completed++;
          if (t0 >= start && t1 <= end) underLoad.push(ms);
        }
      }),
    );
    clearTimeout(startTimer);
    clearTimeout(stopTimer);
    cpu.stop();
    figures.push(
      rate(`${queue.name}.throughput`, "calls/s", completed, windowMs / 1000, {
        note: `${lanes} concurrent senders; ${queue.workerNote}`,
        cpu: cpu.last,
      }),
      latency(`${queue.name}.under_load`, underLoad, { note: `round trip with ${lanes} in flight` }),
    );
    return figures;
  } finally {
    await listener.end();
  }
}

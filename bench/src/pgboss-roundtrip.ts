import { randomUUID } from "node:crypto";
import { PgBoss } from "pg-boss";
import postgres from "postgres";
import type { Scenario } from "./context.js";
import type { WorkerArgs } from "./pgboss-worker.js";
import { CpuMeter } from "./proc.js";
import { forkChild } from "./rpc.js";
import { type Figure, latency, rate } from "./stats.js";

const QUEUE = "bench-call";
const CHANNEL = "bench_boss_done";

/**
 * The same work done with pg-boss 12 alone: a job per call (send with LISTEN/NOTIFY on and a
 * `notify: true` queue), a worker in another process completes it, and the sender learns of the
 * completion through a NOTIFY the worker's handler issues inside pg-boss's completing transaction
 * (see pgboss-worker.ts); not by polling getJobById, which would add its polling interval. The
 * sender registers for a job's completion before sending it, under an id it chose.
 */
export const pgbossRoundtrip: Scenario = {
  name: "pgboss_roundtrip",
  baseline: true,
  async run(ctx) {
    const schema = "bench_boss";
    const boss = new PgBoss({
      connectionString: ctx.databaseUrl,
      schema,
      useListenNotify: true,
      max: 16,
      application_name: "bench-pgboss-sender",
    });
    boss.on("error", (err: unknown) => ctx.log(`  pg-boss sender error: ${String(err)}`));
    await boss.start();
    await boss.createQueue(QUEUE, { notify: true, retryLimit: 0 });
    const listener = postgres(ctx.databaseUrl, { max: 1, onnotice: () => {} });
    const waiters = new Map<string, (at: number) => void>();
    await listener.listen(CHANNEL, (payload) => {
      const at = performance.now();
      for (const id of payload.split(",")) {
        waiters.get(id)?.(at);
        waiters.delete(id);
      }
    });
    const { batchSize, localConcurrency } = ctx.pgboss;
    const worker = forkChild(new URL("./pgboss-worker.js", import.meta.url).pathname);
    const figures: Figure[] = [];
    try {
      await worker.call("start", {
        url: ctx.databaseUrl,
        schema,
        queue: QUEUE,
        channel: CHANNEL,
        batchSize,
        localConcurrency,
      } satisfies WorkerArgs);
      const call = async (i: number): Promise<number> => {
        const id = randomUUID();
        let timer: NodeJS.Timeout | undefined;
        const done = new Promise<number>((resolve, reject) => {
          waiters.set(id, resolve);
          timer = setTimeout(() => reject(new Error(`pg-boss job ${id} not completed within 30 s`)), 30_000);
        });
        const t0 = performance.now();
        await boss.send(QUEUE, { i }, { id });
        try {
          return (await done) - t0;
        } finally {
          clearTimeout(timer);
        }
      };
      for (let i = 0; i < 100; i++) await call(i);
      const n = ctx.quick ? 200 : 1_000;
      const cpu = new CpuMeter(() => ({ sender: process.pid, worker: worker.pid }), ctx.database);
      cpu.start();
      const samples: number[] = [];
      for (let i = 0; i < n; i++) samples.push(await call(i));
      cpu.stop();
      figures.push(
        latency("pgboss_roundtrip", samples, {
          note: "send → worker completes (transactional, NOTIFY in the completing tx) → sender hears; sequential",
          cpu: cpu.last,
        }),
      );

      const lanes = 64;
      const warmupMs = ctx.quick ? 500 : 2_000;
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
        rate("pgboss_roundtrip.throughput", "calls/s", completed, windowMs / 1000, {
          note: `${lanes} concurrent senders; worker batchSize ${batchSize}, localConcurrency ${localConcurrency}`,
          cpu: cpu.last,
        }),
        latency("pgboss_roundtrip.under_load", underLoad, { note: `round trip with ${lanes} in flight` }),
      );
    } finally {
      await worker.call("stop").catch(() => {});
      await worker.stop();
      await listener.end();
      await boss.stop({ graceful: false, timeout: 2_000 });
    }
    return { figures };
  },
};

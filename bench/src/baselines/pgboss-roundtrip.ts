import { PgBoss } from "pg-boss";
import type { Scenario } from "../runner/context.js";
import { forkChild } from "../runner/rpc.js";
import type { WorkerArgs } from "./pgboss-worker.js";
import { measureQueue } from "./queue-roundtrip.js";

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
    const { batchSize, localConcurrency } = ctx.pgboss;
    const worker = forkChild(new URL("./pgboss-worker.js", import.meta.url).pathname);
    try {
      await worker.call("start", {
        url: ctx.databaseUrl,
        schema,
        queue: QUEUE,
        channel: CHANNEL,
        batchSize,
        localConcurrency,
      } satisfies WorkerArgs);
      const figures = await measureQueue(ctx, {
        name: "pgboss_roundtrip",
        channel: CHANNEL,
        send: (id, i) => boss.send(QUEUE, { i }, { id }),
        processes: () => ({ sender: process.pid, worker: worker.pid }),
        workerNote: `worker batchSize ${batchSize}, localConcurrency ${localConcurrency}`,
      });
      return { figures };
    } finally {
      await worker.call("stop").catch(() => {});
      await worker.stop();
      await boss.stop({ graceful: false, timeout: 2_000 });
    }
  },
};

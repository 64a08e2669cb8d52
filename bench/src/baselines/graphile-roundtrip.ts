import { Logger, makeWorkerUtils } from "graphile-worker";
import type { Scenario } from "../runner/context.js";
import { forkChild } from "../runner/rpc.js";
import type { GraphileWorkerArgs } from "./graphile-worker.js";
import { measureQueue } from "./queue-roundtrip.js";

const SCHEMA = "bench_graphile";
const TASK = "bench_call";
const CHANNEL = "bench_graphile_done";

const quiet = new Logger(() => (level, message) => {
  if (level === "error") process.stderr.write(`graphile-worker sender: ${message}\n`);
});

/**
 * The same work done with graphile-worker alone, in its own schema of the run's database: a job per
 * call (`addJob`, which NOTIFYs the worker), a worker in another process runs it, and the sender
 * learns of the completion from a statement-level trigger on graphile-worker's jobs table: it
 * completes a job by deleting its row, and the trigger NOTIFYs the deleted jobs' ids (the sender's
 * own, carried in the payload) inside that transaction. Same guarantee as the pg-boss baseline and
 * as Brain's ack after commit; the trigger is one statement per completing transaction.
 */
export const graphileRoundtrip: Scenario = {
  name: "graphile_roundtrip",
  baseline: true,
  async run(ctx) {
    const utils = await makeWorkerUtils({
      connectionString: ctx.databaseUrl,
      schema: SCHEMA,
      maxPoolSize: 16,
      logger: quiet,
    });
    const worker = forkChild(new URL("./graphile-worker.js", import.meta.url).pathname);
    try {
      await utils.migrate();
      await utils.withPgClient((client) =>
        client.query(`
          CREATE OR REPLACE FUNCTION ${SCHEMA}.bench_done() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            PERFORM pg_notify('${CHANNEL}', ids) FROM (SELECT string_agg(payload->>'id', ',') AS ids FROM done) d
              WHERE ids IS NOT NULL;
            RETURN NULL;
          END $$;
          CREATE OR REPLACE TRIGGER bench_done AFTER DELETE ON ${SCHEMA}._private_jobs
            REFERENCING OLD TABLE AS done FOR EACH STATEMENT EXECUTE FUNCTION ${SCHEMA}.bench_done();`),
      );
      const { concurrency, localQueueSize, completeJobBatchDelay } = ctx.graphile;
      await worker.call("start", {
        url: ctx.databaseUrl,
        schema: SCHEMA,
        task: TASK,
        concurrency,
        localQueueSize,
        completeJobBatchDelay,
      } satisfies GraphileWorkerArgs);
      const figures = await measureQueue(ctx, {
        name: "graphile_roundtrip",
        channel: CHANNEL,
        send: (id, i) => utils.addJob(TASK, { id, i }, { maxAttempts: 1 }),
        processes: () => ({ sender: process.pid, worker: worker.pid }),
        workerNote: `graphile-worker concurrency ${concurrency}, localQueue.size ${localQueueSize > 1 ? localQueueSize : "off"}, completeJobBatchDelay ${completeJobBatchDelay}`,
      });
      return { figures };
    } finally {
      await worker.call("stop").catch(() => {});
      await worker.stop();
      await utils.release();
    }
  },
};

// The graphile-worker worker of the graphile_roundtrip baseline: its own process, like a
// production worker. Its task does nothing; the sender learns of a job's completion from a
// statement trigger on graphile-worker's jobs table (graphile-roundtrip.ts), which NOTIFYs inside
// the transaction that deletes (completes) the job: heard exactly when the completion is durable.
import { Logger, type Runner, run } from "graphile-worker";
import { serve } from "../runner/rpc.js";

export interface GraphileWorkerArgs {
  url: string;
  schema: string;
  task: string;
  concurrency: number;
  /** graphile-worker's `localQueue.size` (jobs fetched and locked per fetch); ≤ 1 = off. */
  localQueueSize: number;
  /** graphile-worker's `completeJobBatchDelay` in ms; -1 = each completion its own statement. */
  completeJobBatchDelay: number;
}

let runner: Runner | undefined;

// Only errors: its info lines (one per job) would cost the worker CPU the baseline should not pay.
const logger = new Logger(() => (level, message) => {
  if (level === "error") process.stderr.write(`graphile-worker: ${message}\n`);
});

serve({
  async start(args: GraphileWorkerArgs): Promise<null> {
    runner = await run({
      connectionString: args.url,
      schema: args.schema,
      concurrency: args.concurrency,
      maxPoolSize: args.concurrency + 2,
      noHandleSignals: true,
      logger,
      taskList: { [args.task]: async () => {} },
      preset: {
        worker: {
          completeJobBatchDelay: args.completeJobBatchDelay,
          ...(args.localQueueSize > 1 ? { localQueue: { size: args.localQueueSize } } : {}),
        },
      },
    });
    return null;
  },
  async stop(): Promise<null> {
    await runner?.stop();
    return null;
  },
});

// The pg-boss worker of the pgboss_roundtrip baseline: its own process, like a production worker.
// A transactional worker, so the handler's NOTIFY (how the sender learns of completion) commits in
// the same transaction as pg-boss's own completion of the job(s): the sender hears of a job exactly
// when its completion is durable, as Brain's ack follows the commit of a tool's result.
// batchSize 16 × localConcurrency 1 with burstWhenBatchFull was among the fastest configurations
// tried (1×1, 16×1, 64×1, 8×2, 16×2, 16×4, 4×8); override with --pgboss-batch/--pgboss-concurrency.
import { PgBoss } from "pg-boss";
import { serve } from "../runner/rpc.js";

export interface WorkerArgs {
  url: string;
  schema: string;
  queue: string;
  channel: string;
  batchSize: number;
  localConcurrency: number;
}

let boss: PgBoss | undefined;

serve({
  async start(args: WorkerArgs): Promise<null> {
    boss = new PgBoss({
      connectionString: args.url,
      schema: args.schema,
      useListenNotify: true,
      max: args.localConcurrency + 4,
      application_name: "bench-pgboss-worker",
    });
    boss.on("error", (err: unknown) => process.stderr.write(`pg-boss worker error: ${String(err)}\n`));
    await boss.start();
    await boss.work(
      args.queue,
      {
        transactional: true,
        batchSize: args.batchSize,
        localConcurrency: args.localConcurrency,
        // Without it a worker that fetched a full batch sleeps until the next NOTIFY; wake-ups
        // that arrive together collapse into one, so under load jobs are stranded until the 30 s
        // polling backstop and every sender stalls (BENCHMARKS.md, "pg-boss").
        burstWhenBatchFull: true,
      },
      async (jobs, tx) => {
        await tx.executeSql("SELECT pg_notify($1, $2)", [args.channel, jobs.map((j) => j.id).join(",")]);
        return null;
      },
    );
    return null;
  },
  async stop(): Promise<null> {
    await boss?.stop({ graceful: false, timeout: 2_000 });
    return null;
  },
});

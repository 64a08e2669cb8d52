import { endOverdueCalls } from "@aexhq/brain-db/ops";
import { DEADLINE_QUEUE, deadlineBucket, enqueueDeadlineJob } from "@aexhq/brain-db/queue";
import type { JournalWriter, WriteOp } from "@aexhq/brain-db/writer";
import type { PgBoss } from "pg-boss";

/**
 * The durable deadline backstop. Every second that holds a deadline gets one pg-boss job
 * (startAfter = that second), committed in the same transaction as the tool_call_started records
 * that need it; when it runs, on whichever server, it ends every open call whose deadline has
 * passed with `timeout`. So a deadline fires even if the server that armed its timer died, at a
 * cost of one job per second rather than one per call.
 */
export class DeadlineJobs {
  /** Seconds whose job has committed, so later calls in the same second add nothing. */
  private readonly scheduled = new Set<number>();

  constructor(
    private readonly boss: PgBoss,
    private readonly writer: JournalWriter,
  ) {}

  async startWorker(onError: (err: unknown) => void): Promise<void> {
    await this.boss.work(DEADLINE_QUEUE, { pollingIntervalSeconds: 1, notifyPollingIntervalSeconds: 1 }, async () => {
      try {
        await this.writer.submit(endOverdueCalls());
      } catch (err) {
        onError(err);
      }
    });
  }

  /** `op`, plus the backstop jobs its deadlines need, in the same transaction. */
  wrap<R>(op: WriteOp<R>, deadlines: number[]): WriteOp<R> {
    const now = Math.floor(Date.now() / 1000);
    for (const b of this.scheduled) if (b < now) this.scheduled.delete(b);
    const buckets = [...new Set(deadlines.map(deadlineBucket))].filter((b) => !this.scheduled.has(b));
    if (buckets.length === 0) return op;
    return {
      keys: op.keys,
      exclusive: op.exclusive,
      // The jobs write no records: what the append wrote is still all there is.
      ...(op.written ? { written: (result: R) => op.written!(result) } : {}),
      // No `notify`: pg-boss's send may await before its statement, so the batch takes two round trips.
      run: (tx) => {
        const main = op.run(tx);
        const jobs = buckets.map((b) => enqueueDeadlineJob(this.boss, tx, b));
        return Promise.all([main, ...jobs]).then(([result]) => {
          for (const b of buckets) this.scheduled.add(b);
          return result as R;
        });
      },
    };
  }
}

/**
 * How a worker takes jobs off the calls queue. One job at a time per poller and as many pollers
 * as invocations may run: pg-boss never hands this worker more than it can run, so other workers
 * get the rest. Each job's group is its session's owner (see enqueueWorkerJob), and no owner holds
 * more than `tokenSlots` of this worker's slots at once: a tenant whose calls never end cannot take
 * every slot from the others.
 *
 * pg-boss puts back a job fetched past its group's share and fetches it again only when a poller
 * next looks: woken by a new job's NOTIFY, or its poll. So a slot that frees wakes a poller
 * (shortly after, once pg-boss has counted the slot free; pg-boss names only its first poller),
 * and every poller polls each POLL_SECONDS besides, rather than pg-boss's 30 s, so a job put back
 * never waits long for a free slot.
 */
import { WORKER_QUEUE } from "@aexhq/brain-db/queue";
import type { PgBoss } from "pg-boss";

const POLL_SECONDS = 2;
/** After a job's handler returns: pg-boss settles the job and frees its group's slot, then this. */
const WAKE_AFTER_MS = 25;

export interface ConsumeOptions {
  concurrency: number;
  tokenSlots: number;
}

export async function consumeJobs(
  boss: PgBoss,
  options: ConsumeOptions,
  run: (job: { id: string; data: unknown }) => Promise<void>,
): Promise<void> {
  let first: string | undefined;
  const wake = () => {
    const timer = setTimeout(() => first !== undefined && boss.notifyWorker(first), WAKE_AFTER_MS);
    timer.unref();
  };
  first = await boss.work(
    WORKER_QUEUE,
    {
      batchSize: 1,
      localConcurrency: options.concurrency,
      localGroupConcurrency: options.tokenSlots,
      pollingIntervalSeconds: POLL_SECONDS,
      notifyPollingIntervalSeconds: POLL_SECONDS,
    },
    async (jobs) => {
      try {
        for (const job of jobs) await run(job);
      } finally {
        wake();
      }
    },
  );
}

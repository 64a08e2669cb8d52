/** @aexhq/brain-db/queue: pg-boss: the deadline backstop and worker jobs. */
export {
  BOSS_KEEP_SECONDS,
  type BossOptions,
  type CreatedBoss,
  createBoss,
  DEADLINE_QUEUE,
  deadlineBucket,
  enqueueDeadlineJob,
  enqueueWorkerJob,
  LOST_JOB_SECONDS,
  requeueLostWorkerJobs,
  startBoss,
  transactionDb,
  WORKER_QUEUE,
} from "../boss.js";
export { bossDatabase } from "../boss-db.js";

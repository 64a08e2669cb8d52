import { PgBoss } from "pg-boss";
import type { Sql, TransactionSql } from "postgres";
import { bossDatabase } from "./boss-db.js";
import type { CallKey } from "./call-key.js";
import { derivePool } from "./connect.js";
import { bossSchemaFor } from "./schema-name.js";
import { tables } from "./tables.js";

export interface BossOptions {
  /** pg-boss's own LISTEN, for a process that works a notifying queue. */
  listen: boolean;
  /** Install or upgrade pg-boss's schema (default), or only check it. */
  migrate?: boolean;
}

/** The queue of deadline backstop jobs: one per second that holds at least one deadline. */
export const DEADLINE_QUEUE = "brain-deadlines";
/** One job per tool call a worker runs (component, HTTP), `{ sessionId, seq }`, enqueued with its tool_call_started. */
export const WORKER_QUEUE = "brain-calls";

/**
 * pg-boss, in a schema named after Brain's. Nothing is retried: a deadline job that fails is
 * replaced by the next second's, and component jobs must run at most once.
 *
 * `listen`: its LISTEN/NOTIFY wake-up (about 4 ms from send to handler instead of polling), for a
 * process that works a notifying queue (the worker, `WORKER_QUEUE`). A process that only sends to
 * it or polls turns it off: Postgres wakes every listening backend of the database on every
 * notifying commit, whatever its channel, so an idle listener costs a wake-up per journal commit.
 * `migrate: false` (a role that may not run DDL) checks pg-boss's schema instead of installing it.
 */
export async function startBoss(
  sql: Sql,
  schema: string,
  onError: (error: unknown) => void,
  options: BossOptions = { listen: true },
): Promise<PgBoss> {
  const created = createBoss(sql, schema, onError, options);
  await created.start();
  return created.boss;
}

/** pg-boss made and wired but not started: no I/O until `start` (pools connect on first use). */
export interface CreatedBoss {
  boss: PgBoss;
  /** Starts pg-boss and makes Brain's queues; on failure, ends its pools and rejects. */
  start(): Promise<void>;
}

/** startBoss in two steps, for a process that builds everything before it starts anything. */
export function createBoss(
  sql: Sql,
  schema: string,
  onError: (error: unknown) => void,
  options: BossOptions = { listen: true },
): CreatedBoss {
  // A pool of pg-boss's own beside `sql`, on the same driver and URL; ended when pg-boss stops.
  const pool = derivePool(sql, "brain-boss", 4);
  // Its LISTEN (the worker's, when told to listen) on a direct connection, where there is one.
  const listenOn = options.listen ? derivePool(sql, "brain-boss", 1, { direct: true }) : pool;
  const boss = new PgBoss({
    db: bossDatabase(pool, listenOn),
    schema: bossSchemaFor(schema),
    useListenNotify: options.listen,
    migrate: options.migrate ?? true,
  });
  boss.on("error", onError);
  const end = () => Promise.all([pool.end({ timeout: 1 }), listenOn === pool ? null : listenOn.end({ timeout: 1 })]);
  boss.once("stopped", () => void end());
  const start = async () => {
    try {
      await boss.start();
    } catch (error) {
      await end();
      throw error;
    }
    // Deadline jobs are deferred, so NOTIFY on insert would wake nobody usefully: they are polled.
    await ensureQueue(boss, DEADLINE_QUEUE, { policy: "short", retryLimit: 0 });
    // At most once: a component job is never retried (the call's claim also refuses a second run).
    await ensureQueue(boss, WORKER_QUEUE, { retryLimit: 0, notify: true });
  };
  return { boss, start };
}

/**
 * pg-boss's own retention: a finished job is kept BOSS_KEEP_SECONDS, not its default 7 days (the
 * deadline queue makes a job per second that holds a deadline). Jobs not yet run keep pg-boss's
 * default (14 days past their start time), so a deferred deadline job is never dropped early.
 * pg-boss's maintenance deletes them; the journal, not the job table, is the history.
 */
export const BOSS_KEEP_SECONDS = 24 * 3600;
const RETENTION = { deleteAfterSeconds: BOSS_KEEP_SECONDS };

/** Creates a queue, or applies the retention settings to one an older release created. */
async function ensureQueue(boss: PgBoss, name: string, options: Parameters<PgBoss["createQueue"]>[1]): Promise<void> {
  await boss.createQueue(name, { ...options, ...RETENTION });
  await boss.updateQueue(name, RETENTION);
}

/** pg-boss's database seam over one of our transactions, so a job commits with the journal. */
export function transactionDb(tx: TransactionSql) {
  return {
    async executeSql(text: string, values?: unknown[]) {
      const rows = await tx.unsafe(text, (values ?? []) as never[]);
      return { rows: [...rows] };
    },
  };
}

/** The backstop fires at the start of the second after the deadline. */
export function deadlineBucket(deadlineMs: number): number {
  return Math.ceil(deadlineMs / 1000);
}

/** Enqueues the backstop job of one deadline second inside `tx`; a duplicate second is a no-op. */
export async function enqueueDeadlineJob(boss: PgBoss, tx: TransactionSql, bucket: number): Promise<void> {
  await boss.send(
    DEADLINE_QUEUE,
    { bucket },
    { startAfter: new Date(bucket * 1000), singletonKey: String(bucket), db: transactionDb(tx) },
  );
}

/** The pg-boss group of the operator's sessions (a token's group is its id). */
export const OPERATOR_GROUP = "operator";

/**
 * Enqueues a worker call's job inside `tx`, so it commits with the call's tool_call_started. Its
 * group is the session's owner (its application token, or the operator): a worker runs at most
 * its per-owner share of one group's jobs at once, so one tenant's flood leaves slots to others.
 */
export async function enqueueWorkerJob(
  boss: PgBoss,
  tx: TransactionSql,
  job: CallKey,
  owner: string | null,
): Promise<void> {
  await boss.send(WORKER_QUEUE, { ...job }, { db: transactionDb(tx), group: { id: owner ?? OPERATOR_GROUP } });
}

/** A pending component call older than this, with no claim, is presumed to have lost its job. */
export const LOST_JOB_SECONDS = 30;

/**
 * Enqueues again the jobs of component calls that have waited `pending` for LOST_JOB_SECONDS (at
 * most once per that period per call, whichever worker gets there first): a worker that dies
 * after pg-boss handed it a job but before it claimed the call would otherwise leave the call
 * waiting for its deadline, or forever. A duplicate job is harmless: only a pending call can be
 * claimed. Returns how many were enqueued.
 */
export async function requeueLostWorkerJobs(sql: Sql, boss: PgBoss): Promise<number> {
  const brain = tables(sql);
  return sql.begin(async (tx) => {
    const rows = await tx<{ session_id: string; seq: number; token_id: string | null }[]>`
      UPDATE ${brain.calls} SET requeued_at = now()
      WHERE (session_id, seq) IN (
        SELECT session_id, seq FROM ${brain.calls}
        WHERE state = 'pending' AND executor = 'worker'
          AND started_at < now() - make_interval(secs => ${LOST_JOB_SECONDS})
          AND (requeued_at IS NULL OR requeued_at < now() - make_interval(secs => ${LOST_JOB_SECONDS}))
        LIMIT 100
        FOR UPDATE SKIP LOCKED)
      RETURNING session_id, seq, (SELECT s.token_id FROM ${brain.sessions} s WHERE s.id = calls.session_id) AS token_id`;
    for (const r of rows) await enqueueWorkerJob(boss, tx, { sessionId: r.session_id, seq: r.seq }, r.token_id);
    return rows.length;
  });
}

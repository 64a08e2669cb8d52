import type { TransactionSql } from "postgres";
import { isConnectionError } from "../availability.js";
import { type CommitKeys, emptyKeys, encodeKeys, mergeKeys } from "../commit-keys.js";
import { tables } from "../tables.js";
import { firstFailure, type Lane, type Settled } from "./lane.js";
import { issueWrites } from "./merge.js";
import type { WriteOp } from "./write-op.js";

/**
 * One batch's transaction on the writer's connection: the writer's mark, the writes and the
 * NOTIFY, as one pipeline (one round trip, committed at its end), or between BEGIN and COMMIT
 * when the NOTIFY needs the writes' answers first. What the writer does with the answers
 * (resolve, retry, fall back, ask the mark) is writer.ts's; what the answers mean is decided here.
 */

/** How a batch's mark is set: the first batch in flight upserts it; one sent behind another takes it over. */
export type MarkRule = { kind: "upsert" } | { kind: "after"; previous: string };

/**
 * BEGIN and the mark. A batch sent while an earlier one is still unanswered on the same connection
 * moves the mark on from that batch's id, and fails (division by zero) when it is not there: the
 * earlier batch did not commit. So a batch commits only if every batch sent before it did, and a
 * reader of the mark after a lost connection learns how far the batches committed.
 */
export function beginBatch(c: TransactionSql, writerId: string, batch: string, rule: MarkRule): Promise<unknown>[] {
  return [c`BEGIN`.execute(), markBatch(c, writerId, batch, rule)];
}

function markBatch(c: TransactionSql, writerId: string, batch: string, rule: MarkRule): Promise<unknown> {
  const brain = tables(c);
  if (rule.kind === "after") {
    return c`WITH m AS (
        UPDATE ${brain.writer_marks} SET batch = ${batch}, at = now()
        WHERE writer_id = ${writerId} AND batch = ${rule.previous}
        RETURNING 1)
      SELECT 1 / count(*) AS after_previous FROM m`.execute();
  }
  // An upsert, not an update: retention deletes the marks of writers idle past its window, and
  // a batch that found no row to mark would leave a lost answer unreadable (taken for aborted,
  // then applied a second time).
  return c`INSERT INTO ${brain.writer_marks} (writer_id, batch) VALUES (${writerId}, ${batch})
    ON CONFLICT (writer_id) DO UPDATE SET batch = excluded.batch, at = now()`.execute();
}

/**
 * `c` whose queries go out as one pipeline (db/driver/postgres-3.4.9-pipelines.patch): no Sync after each,
 * so Postgres runs them and the next query sent on `c` itself, which carries the Sync, as one
 * implicit transaction, and answers them all at once, after the commit. One per connection.
 */
const pipelines = new WeakMap<TransactionSql, TransactionSql>();
function pipelined(c: TransactionSql): TransactionSql {
  let p = pipelines.get(c);
  if (p === undefined) {
    const tag = c as unknown as (...args: unknown[]) => unknown;
    const marking = (...args: unknown[]) => {
      const q = tag(...args) as { options?: { pipelined?: boolean } };
      // Only queries carry options; a helper's value (sql(identifier)) passes as it is.
      if (q.options) q.options.pipelined = true;
      return q;
    };
    p = Object.assign(marking, c) as unknown as TransactionSql;
    pipelines.set(c, p);
  }
  return p;
}

/** The batch's writes, merged where they can be (merge.ts): one promise per write. */
export function issueBatchWrites(
  c: TransactionSql,
  ops: WriteOp<unknown>[],
  stats: { statements: number; merged: number },
  citus = false,
): Promise<unknown>[] {
  const before = stats.statements;
  const sent = issueWrites(c, ops, () => stats.statements++, citus);
  if (stats.statements - before < ops.length) stats.merged++;
  return sent;
}

/** The NOTIFYs of a batch's keys (one, or more past 8000 bytes; none when it touched nothing). */
export function notifyKeys(
  c: TransactionSql,
  channel: string,
  origin: string,
  keys: CommitKeys,
  pipeline?: TransactionSql,
): Promise<unknown>[] {
  const payloads = encodeKeys(origin, keys);
  // In a pipeline, every NOTIFY but the last goes without a Sync; the last carries it.
  return payloads.map((p, i) =>
    (pipeline && i < payloads.length - 1 ? pipeline : c)`SELECT pg_notify(${channel}, ${p})`.execute(),
  );
}

/** A one-round-trip batch as sent: every query's promise in wire order, and how many NOTIFYs. */
export interface SentBatch {
  sent: Promise<unknown>[];
  notifies: number;
  /**
   * The answer to its last write. Postgres answers a pipeline at its end, after the commit, so
   * this comes with the rest unless the driver had to describe a statement first (the writer's
   * rule for sending a batch behind another, writer/index.ts, then rarely fires on one machine; a Flush after the writes would cost
   * a round trip across a network).
   */
  lastWrite: Promise<unknown>;
}

/**
 * Sends a batch whose every write announced its keys (`notify`) in one round trip, as one
 * pipeline: the mark, the writes and the NOTIFY of the announced keys, committed at the Sync its
 * last statement carries (the last NOTIFY, or a bare SELECT when the batch touched nothing). No
 * BEGIN or COMMIT: a pipeline is its own transaction, and a statement that fails rolls it back
 * whole. postgres.js takes a query in the order it is asked to run (`.execute()`, or `.then` on
 * it), so the order of these calls is the order Postgres runs them in, and the pipeline leaves in
 * one write when the last is asked to run; a write that awaited its query instead would send it
 * after the Sync (see WriteOp.notify).
 */
export function sendOneTrip(
  c: TransactionSql,
  batch: { writerId: string; id: string; rule: MarkRule },
  ops: WriteOp<unknown>[],
  notify: { channel: string; origin: string },
  stats: { statements: number; merged: number },
): SentBatch {
  const p = pipelined(c);
  const sent = [markBatch(p, batch.writerId, batch.id, batch.rule)];
  sent.push(...issueBatchWrites(p, ops, stats));
  const lastWrite = sent[sent.length - 1]!;
  const notifies = notifyKeys(c, notify.channel, notify.origin, announcedKeys(ops), p);
  sent.push(...notifies);
  if (notifies.length === 0) sent.push(c`SELECT 1`.execute());
  return { sent, notifies: notifies.length, lastWrite };
}

/** The keys every write of a one-round-trip batch announced in advance. */
export function announcedKeys(ops: WriteOp<unknown>[]): CommitKeys {
  const keys = emptyKeys();
  for (const op of ops) mergeKeys(keys, op.notify!);
  return keys;
}

/** What the answers of a batch whose COMMIT was sent say. */
export type BatchOutcome =
  /** Committed, with each write's result. */
  | { kind: "committed"; results: unknown[] }
  /** Known not committed (a write failed, or COMMIT was refused): `error` is why. */
  | { kind: "refused"; error: unknown }
  /** The connection was lost before the answer to COMMIT: only the mark can tell. */
  | { kind: "lost"; reason: unknown; answered: boolean; results: unknown[] };

/**
 * Reads a batch's answers, in order: a pipeline's (`pipeline`: the mark, the writes, the NOTIFY,
 * the last answered after the commit) or a transaction's (BEGIN, the mark, the writes, the NOTIFY
 * and COMMIT). A write that fails aborts the transaction: Postgres skips the rest of a pipeline
 * (the driver rejects those with the same error) and answers a COMMIT with ROLLBACK. Nothing of
 * the batch is kept, and the first failure in wire order is the cause (the rest its echo).
 */
export function batchOutcome(lane: Lane, s: Settled, writes: number, pipeline: boolean): BatchOutcome {
  const commit = s.results[s.results.length - 1];
  const failed = firstFailure(s);
  const first = pipeline ? 1 : 2;
  const answers = s.results.slice(first, first + writes);
  const results = answers.map((r) => (r?.status === "fulfilled" ? r.value : undefined));
  if (commit?.status === "fulfilled") {
    const command = (commit.value as { command?: string } | undefined)?.command;
    if ((pipeline || command === "COMMIT") && !failed) return { kind: "committed", results };
    return {
      kind: "refused",
      error: failed ? failed.reason : new Error(`journal batch was not committed (${command})`),
    };
  }
  const reason = commit?.reason ?? failed?.reason ?? new Error("the writer's connection closed");
  if (!s.lost && !lane.dead && !isConnectionError(reason)) {
    // COMMIT itself refused (a deferred check): the transaction is over and nothing was kept.
    return { kind: "refused", error: failed ? failed.reason : reason };
  }
  return { kind: "lost", reason, answered: answers.every((r) => r?.status === "fulfilled"), results };
}

import type { TransactionSql } from "postgres";
import { isConnectionError } from "./availability.js";
import { type CommitKeys, emptyKeys, encodeKeys, mergeKeys } from "./commit-keys.js";
import type { WriteOp } from "./write-op.js";
import { firstFailure, type Lane, type Settled } from "./writer-lane.js";
import { issueWrites } from "./writer-merge.js";

/**
 * One batch's transaction on the writer's connection: BEGIN, the writer's mark, the writes, the
 * NOTIFY and COMMIT. What the writer does with the answers (resolve, retry, fall back, ask the
 * mark) is writer.ts's; what the answers mean is decided here.
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
  if (rule.kind === "after") {
    return [
      c`BEGIN`.execute(),
      c`WITH m AS (
          UPDATE writer_marks SET batch = ${batch}, at = now()
          WHERE writer_id = ${writerId} AND batch = ${rule.previous}
          RETURNING 1)
        SELECT 1 / count(*) AS after_previous FROM m`.execute(),
    ];
  }
  return [
    c`BEGIN`.execute(),
    // An upsert, not an update: retention deletes the marks of writers idle past its window, and
    // a batch that found no row to mark would leave a lost answer unreadable (taken for aborted,
    // then applied a second time).
    c`INSERT INTO writer_marks (writer_id, batch) VALUES (${writerId}, ${batch})
      ON CONFLICT (writer_id) DO UPDATE SET batch = excluded.batch, at = now()`.execute(),
  ];
}

/** The batch's writes, merged where they can be (writer-merge.ts): one promise per write. */
export function issueBatchWrites(
  c: TransactionSql,
  ops: WriteOp<unknown>[],
  stats: { statements: number; merged: number },
): Promise<unknown>[] {
  const before = stats.statements;
  const sent = issueWrites(c, ops, () => stats.statements++);
  if (stats.statements - before < ops.length) stats.merged++;
  return sent;
}

/** The NOTIFYs of a batch's keys (one, or more past 8000 bytes; none when it touched nothing). */
export function notifyKeys(c: TransactionSql, channel: string, origin: string, keys: CommitKeys): Promise<unknown>[] {
  return encodeKeys(origin, keys).map((p) => c`SELECT pg_notify(${channel}, ${p})`.execute());
}

/** A one-round-trip batch as sent: every query's promise in wire order, and how many NOTIFYs. */
export interface SentBatch {
  sent: Promise<unknown>[];
  notifies: number;
  /** The answer to its last write: once it is in, Postgres has only the NOTIFY and COMMIT left. */
  lastWrite: Promise<unknown>;
}

/**
 * Sends a batch whose every write announced its keys (`notify`) in one round trip: BEGIN, the
 * mark, the writes, the NOTIFY of the announced keys and COMMIT. postgres.js puts a query on the
 * wire when it is created, so the order of these calls is the order Postgres runs them in: a
 * NOTIFY created before BEGIN would run, and be delivered, in a transaction of its own, before the
 * writes it announces exist.
 */
export function sendOneTrip(
  c: TransactionSql,
  batch: { writerId: string; id: string; rule: MarkRule },
  ops: WriteOp<unknown>[],
  notify: { channel: string; origin: string },
  stats: { statements: number; merged: number },
): SentBatch {
  const sent = beginBatch(c, batch.writerId, batch.id, batch.rule);
  sent.push(...issueBatchWrites(c, ops, stats));
  const lastWrite = sent[sent.length - 1]!;
  const notifies = notifyKeys(c, notify.channel, notify.origin, announcedKeys(ops));
  sent.push(...notifies, c`COMMIT`.execute());
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
 * Reads a batch's answers (`s`: BEGIN, the mark, the writes, the NOTIFY and COMMIT, in order). A
 * write that fails aborts the transaction, and Postgres answers the COMMIT with ROLLBACK: nothing
 * of the batch is kept, and the first failure in pipeline order is the cause (the rest its echo).
 */
export function batchOutcome(lane: Lane, s: Settled, writes: number): BatchOutcome {
  const commit = s.results[s.results.length - 1];
  const failed = firstFailure(s);
  const answers = s.results.slice(2, 2 + writes);
  const results = answers.map((r) => (r?.status === "fulfilled" ? r.value : undefined));
  if (commit?.status === "fulfilled") {
    const command = (commit.value as { command?: string } | undefined)?.command;
    if (command === "COMMIT" && !failed) return { kind: "committed", results };
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

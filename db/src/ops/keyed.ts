import type { TransactionSql } from "postgres";
import { tables } from "../tables.js";

/**
 * How a journal write statement names its sessions. Merged (several writes, writer/merge.ts), each
 * input row carries its session and the input is read through write_inputs (migration 0015),
 * whose estimate keeps the plan on primary-key probes. Keyed (one write alone, on a Citus cluster:
 * WriterOptions.mergeSessions), the session is a constant wherever the statement reads or writes
 * its rows, so that Citus runs every step on the worker holding that session's shard, and the
 * input is read directly (no function of Brain's is needed on a worker).
 */
export interface Keying {
  /** The session id of a keyed statement, null for a merged one. */
  session: string | null;
}

export function keying(keyed: boolean, inputs: readonly { sid: string }[]): Keying {
  return { session: keyed ? inputs[0]!.sid : null };
}

/** The session of the row `column` belongs to: the column, or the keyed statement's constant. */
export function sessionOf(tx: TransactionSql, k: Keying, column: string) {
  return k.session === null ? tx.unsafe(column) : tx`${k.session}::uuid`;
}

/** The rows of a write statement's input (`json`, an array with one object per write). */
export function inputRows(tx: TransactionSql, k: Keying, json: string) {
  return k.session === null
    ? tx`${tables(tx).write_inputs}(${json}::text::jsonb)`
    : tx`jsonb_array_elements(${json}::text::jsonb)`;
}

/**
 * A keyed statement's share lock on its session row, as a statement of its own sent just before
 * it: Citus cannot pass the rows of a locking step on to the next step of the same statement.
 * Sent now (queries run in the order they are asked to); a failure aborts the transaction, which
 * the statement then reports. Nothing for a merged statement, which locks in its own CTE.
 */
export function shareLockFirst(tx: TransactionSql, k: Keying): void {
  if (k.session === null) return;
  tx`SELECT FROM ${tables(tx).sessions} WHERE id = ${k.session}::uuid FOR KEY SHARE`.execute().catch(() => {});
}

import type { TransactionSql } from "postgres";
import type { CommitKeys } from "../commit-keys.js";
import type { Mergeable } from "./merge.js";

/**
 * One write: a single SQL statement (usually a data-modifying CTE) and the keys it touches.
 * `run` must issue its statement before its first await: the writer relies on statements reaching
 * the connection in submission order, which keeps each session's appends in order inside a batch.
 */
export interface WriteOp<R> {
  run(tx: TransactionSql): Promise<R>;
  /** Keys to announce once committed, from what the statement actually wrote. */
  keys(result: R): CommitKeys;
  /**
   * A write of several dependent statements (awaiting between them). It runs in a transaction of
   * its own, in queue order, so it cannot reorder other writes.
   */
  exclusive?: boolean;
  /**
   * Keys known before running, for the NOTIFY: every key `keys` could return (a superset; a write
   * that wrote nothing only wakes other processes for nothing). An op that has them issues all of
   * its statements synchronously in `run` and none after (`.then` or `.execute()` on each query:
   * `await` puts a query on the wire a microtask later, after the batch's NOTIFY and the Sync that
   * commits it, outside the transaction), so a batch made only of such ops goes
   * out in one round trip: the mark, the statements and the NOTIFY, as one pipeline that commits
   * at its end (batch.ts).
   */
  notify?: CommitKeys;
  /**
   * How this write shares a statement with others of its kind in a batch (appends, transitions).
   * `run` must do exactly what `merge.many` does for this write alone: a batch that fails is
   * retried write by write through `run`.
   */
  merge?: Mergeable<R>;
  /**
   * The records this write appended to its session, exactly as a reader of the journal would get
   * them (payloads through asStoredJson), or null when it wrote none. Handed to `onCommit`, so
   * that this process need not read back what it has just written. A write without it (or whose
   * session another write of the batch touched without it) leaves its sessions to be read.
   */
  written?(result: R): { sessionId: string; records: WrittenRecord[] } | null;
  /**
   * Runs as soon as the write's batch is known committed, before anything else the commit sets
   * off (its writes resolving, the keys announced, the observer told): for what must leave the
   * process at once, such as the invoke frame of a call the write dispatched. It must not throw
   * and must not wait; a failure is dropped, as the write has committed all the same.
   */
  committed?(result: R): void;
}

/** A journal record as written, for the in-process wake-up path (see WriteOp.written). */
export interface WrittenRecord {
  seq: number;
  kind: string;
  payload: unknown;
  createdAt: Date;
}

import type { ReservedSql, Sql, TransactionSql } from "postgres";
import { type CommitKeys, emptyKeys, encodeKeys, mergeKeys } from "./commit-keys.js";

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
   * Keys known before running, for the NOTIFY. An op that has them issues exactly one statement
   * and nothing after it, so a batch made only of such ops is sent in one pipelined round trip:
   * BEGIN, the statements, the NOTIFY and COMMIT, without waiting in between.
   */
  notify?: CommitKeys;
}

interface Queued {
  op: WriteOp<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

export interface WriterOptions {
  /** The LISTEN/NOTIFY channel. */
  channel: string;
  /** This process's id, carried in NOTIFY payloads. */
  origin: string;
  /** Called after each commit with the union of its keys (the in-process wake-up path). */
  onCommit?: (keys: CommitKeys) => void;
  maxBatch?: number;
}

const DEADLOCK = "40P01";
const SERIALIZATION = "40001";

/**
 * Group commit for the journal. Writes from every session queue here; while one transaction is
 * flushing, the next batch gathers, with no artificial delay. A batch is one transaction with one
 * NOTIFY (split only past 8000 bytes), so notifying commits, which Postgres serialises cluster-wide,
 * are shared by everything in flight. If a batch fails, its writes are retried one by one so that a
 * bad write fails alone.
 */
export class JournalWriter {
  private queue: Queued[] = [];
  private conn: Promise<ReservedSql> | undefined;
  private flushing = false;
  private readonly maxBatch: number;
  /** Statistics for benchmarks and diagnostics. */
  readonly stats = { batches: 0, writes: 0, fallbacks: 0 };

  constructor(
    private readonly sql: Sql,
    private readonly options: WriterOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 256;
  }

  submit<R>(op: WriteOp<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushing) void this.flush();
    });
  }

  /** Resolves once everything submitted so far has committed or failed. */
  async drain(): Promise<void> {
    await this.submit({ keys: emptyKeys, run: async () => undefined });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      while (this.queue.length > 0) {
        let n = 1;
        if (!this.queue[0]!.op.exclusive) {
          while (n < this.queue.length && n < this.maxBatch && !this.queue[n]!.op.exclusive) n++;
        }
        await this.commitBatch(this.queue.splice(0, n));
      }
    } finally {
      this.flushing = false;
    }
  }

  private async commitBatch(batch: Queued[]): Promise<void> {
    const keys = emptyKeys();
    try {
      const results = await this.transaction(
        batch.map((q) => q.op),
        keys,
      );
      this.stats.batches++;
      this.stats.writes += batch.length;
      for (const [i, q] of batch.entries()) q.resolve(results[i]);
      this.announce(keys);
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
      this.stats.fallbacks++;
      for (const q of batch) await this.commitBatch([q]);
    }
  }

  private async transaction(ops: WriteOp<unknown>[], keys: CommitKeys): Promise<unknown[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (ops.every((op) => op.notify !== undefined)) {
          const results = await this.pipelined(ops);
          for (const [i, result] of results.entries()) mergeKeys(keys, ops[i]!.keys(result));
          return results;
        }
        return await this.sql.begin(async (tx) => {
          const results = await Promise.all(ops.map((op) => op.run(tx)));
          for (const [i, result] of results.entries()) mergeKeys(keys, ops[i]!.keys(result));
          const payloads = encodeKeys(this.options.origin, keys);
          if (payloads.length > 0) {
            await Promise.all(payloads.map((p) => tx`SELECT pg_notify(${this.options.channel}, ${p})`.execute()));
          }
          return results;
        });
      } catch (error) {
        const code = (error as { code?: string }).code;
        keys.sessions.clear();
        keys.hosts.clear();
        if ((code === DEADLOCK || code === SERIALIZATION) && attempt < 3) continue;
        throw error;
      }
    }
  }

  /**
   * One round trip for a whole batch, on a connection of our own. If any statement fails, Postgres
   * aborts the transaction and answers the COMMIT with ROLLBACK: nothing of the batch is kept.
   */
  private async pipelined(ops: WriteOp<unknown>[]): Promise<unknown[]> {
    this.conn ??= this.sql.reserve();
    const c = (await this.conn) as unknown as TransactionSql;
    const notify = emptyKeys();
    for (const op of ops) mergeKeys(notify, op.notify!);
    const begin = c`BEGIN`.execute();
    const results = ops.map((op) => op.run(c));
    const notifies = encodeKeys(this.options.origin, notify).map((p) =>
      c`SELECT pg_notify(${this.options.channel}, ${p})`.execute(),
    );
    const commit = c`COMMIT`.execute();
    const settled = await Promise.allSettled([begin, ...results, ...notifies, commit]);
    const failed = settled.find((r) => r.status === "rejected");
    const committed = (settled[settled.length - 1] as PromiseFulfilledResult<{ command?: string }>).value;
    if (failed) {
      if (isConnectionError((failed as PromiseRejectedResult).reason)) this.dropConnection();
      throw (failed as PromiseRejectedResult).reason;
    }
    if (committed?.command !== "COMMIT") throw new Error(`journal batch was not committed (${committed?.command})`);
    return (settled.slice(1, 1 + ops.length) as PromiseFulfilledResult<unknown>[]).map((r) => r.value);
  }

  private dropConnection(): void {
    const conn = this.conn;
    this.conn = undefined;
    void conn?.then((c) => c.release()).catch(() => {});
  }

  /** Releases the writer's own connection (the pool is the caller's to end). */
  async close(): Promise<void> {
    await this.drain();
    this.dropConnection();
  }

  private announce(keys: CommitKeys): void {
    if (keys.sessions.size === 0 && keys.hosts.size === 0) return;
    try {
      this.options.onCommit?.(keys);
    } catch {
      // A subscriber's failure must not fail a write that has already committed.
    }
  }
}

function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? "";
  return code.startsWith("CONNECTION_") || code.startsWith("08") || code === "57P01";
}

import { randomUUID } from "node:crypto";
import { BrainError } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import { type DatabaseAvailability, isConnectionError } from "./availability.js";
import { type CommitKeys, emptyKeys, encodeKeys, mergeKeys } from "./commit-keys.js";
import { resolveInDoubt } from "./in-doubt.js";
import { firstFailure, type Lane, openWriterLane, type Settled, settle } from "./writer-lane.js";
import { issueWrites, type Mergeable } from "./writer-merge.js";

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
   * its statements synchronously in `run` and none after, so a batch made only of such ops goes
   * out in one round trip: BEGIN, the mark, the statements, the NOTIFY and COMMIT.
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
}

/** A journal record as written, for the in-process wake-up path (see WriteOp.written). */
export interface WrittenRecord {
  seq: number;
  kind: string;
  payload: unknown;
  createdAt: Date;
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
  /**
   * Called after each commit with the union of its keys (the in-process wake-up path), and the
   * records written to each session that every write touching it described (WriteOp.written);
   * a session touched but absent from `written` must be read.
   */
  onCommit?: (keys: CommitKeys, written: ReadonlyMap<string, WrittenRecord[]>) => void;
  maxBatch?: number;
  /** Told when the database goes away; while it is away, writes fail at once. */
  availability?: DatabaseAvailability;
  /** How long a batch whose COMMIT may or may not have happened waits for the database to say. */
  inDoubtMs?: number;
  /**
   * How long one transaction may go unanswered before its connection is cut (default 60 s). Brain's
   * writes are short; a connection that stops answering (a half-open socket, a driver that lost a
   * query) must not stall every later write of the process behind it.
   */
  stallMs?: number;
  /**
   * Told after each committed batch, for metrics: the process that owns the writer counts what it
   * likes (db stays free of any metrics library). Called synchronously; it must be cheap.
   */
  observer?: (flush: FlushInfo) => void;
}

/** One committed batch, as the writer's observer sees it. */
export interface FlushInfo {
  /** Writes committed in the batch's transaction. */
  writes: number;
  /** NOTIFYs sent with it (one, or more past 8000 bytes of keys; none when it touched no key). */
  notifies: number;
  /** Milliseconds from BEGIN to the COMMIT's answer. */
  ms: number;
}

const DEADLOCK = "40P01";
const SERIALIZATION = "40001";

/** The connection failed before COMMIT was sent, or the database says the transaction aborted. */
class NotCommitted extends Error {
  constructor(override readonly cause: unknown) {
    super("the journal batch was not committed");
  }
}

/**
 * Group commit for the journal. Writes from every session queue here; while one transaction is
 * flushing, the next batch gathers, with no artificial delay. A batch is one transaction with one
 * NOTIFY (split only past 8000 bytes), so notifying commits, which Postgres serialises cluster-wide,
 * are shared by everything in flight. If a batch fails, its writes are retried one by one so that a
 * bad write fails alone.
 *
 * Every batch sets the writer's mark (its row in writer_marks) to the batch's own id, inside the
 * batch. A batch whose every write knows its keys in advance (`notify`) is one round trip on the
 * writer's own connection: BEGIN, the mark, the statements, the NOTIFY and COMMIT, pipelined. Any
 * other batch takes two: BEGIN, the mark and the statements; then the NOTIFY (from what the
 * statements wrote) and COMMIT. When the connection dies before COMMIT was sent, nothing was
 * written and the batch is tried once more on a new connection (a terminated backend, a restart
 * that is already over); after, the mark says whether it committed (see in-doubt.ts), and the
 * batch is either known committed (its results are already in hand) or known not, and never
 * applied twice. While the database is away,
 * writes fail at once with `database_unavailable`; only a batch whose fate the database never
 * comes back to tell fails with `commit_unknown`.
 */
export class JournalWriter {
  private queue: Queued[] = [];
  private lane: Lane | undefined;
  private flushing = false;
  private readonly maxBatch: number;
  /** This writer's row in writer_marks; created before its first batch, and by any batch that finds it gone. */
  private readonly id = randomUUID();
  private marked = false;
  /** NOTIFYs of the transaction last sent (read by commitBatch for the observer). */
  private lastNotifies = 0;
  /** Statistics for benchmarks and diagnostics. */
  readonly stats = {
    batches: 0,
    writes: 0,
    /** Statements the writes took (fewer than writes when some shared one). */
    statements: 0,
    /** Batches in which some writes shared a statement. */
    merged: 0,
    fallbacks: 0,
    retries: 0,
    inDoubt: 0,
    stalls: 0,
  };

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
        if (this.options.availability && !this.options.availability.available) {
          // Fail fast: the database is away, and queued writes would only wait for timeouts.
          for (const q of this.queue.splice(0)) q.reject(unavailable());
          break;
        }
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
    const started = performance.now();
    try {
      const results = await this.transaction(
        batch.map((q) => q.op),
        keys,
      );
      this.stats.batches++;
      this.stats.writes += batch.length;
      for (const [i, q] of batch.entries()) q.resolve(results[i]);
      this.announce(keys, batch, results);
      this.observe({ writes: batch.length, notifies: this.lastNotifies, ms: performance.now() - started });
    } catch (error) {
      // One by one only helps against a bad statement; against the database itself it would not.
      if (batch.length === 1 || error instanceof BrainError) {
        for (const q of batch) q.reject(error);
        return;
      }
      this.stats.fallbacks++;
      for (const q of batch) await this.commitBatch([q]);
    }
  }

  private async transaction(ops: WriteOp<unknown>[], keys: CommitKeys): Promise<unknown[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        // Committed on its own before any batch: a batch's mark is then an update of a row that
        // exists, whose lock tells a later reader to wait for the batch's outcome (unless retention
        // deleted the row meanwhile: then the batch inserts it, and the reader waits on that insert).
        if (!this.marked) await this.createMark();
        return await this.attempt(ops, keys);
      } catch (error) {
        keys.sessions.clear();
        keys.hosts.clear();
        keys.releases.clear();
        const code = (error as { code?: string }).code;
        if ((code === DEADLOCK || code === SERIALIZATION) && attempt < 3) continue;
        if (!(error instanceof NotCommitted)) throw error;
        this.options.availability?.observe(error.cause);
        // Nothing was written: one more try on a new connection, unless the database is known away.
        if (attempt === 0 && (this.options.availability?.available ?? true)) {
          this.stats.retries++;
          continue;
        }
        this.options.availability?.markAway();
        throw unavailable();
      }
    }
  }

  private async attempt(ops: WriteOp<unknown>[], keys: CommitKeys): Promise<unknown[]> {
    const lane = this.currentLane();
    // Cutting the connection rejects whatever it still owes: before COMMIT that means not
    // committed, after it the transaction's status decides, as for any lost connection.
    const watchdog = setTimeout(() => {
      this.stats.stalls++;
      this.abandon(lane, null);
      void lane.pool.end({ timeout: 0 }).catch(() => {});
    }, this.options.stallMs ?? 60_000);
    try {
      return await this.transact(lane, ops, keys);
    } finally {
      clearTimeout(watchdog);
    }
  }

  private async transact(lane: Lane, ops: WriteOp<unknown>[], keys: CommitKeys): Promise<unknown[]> {
    let c: TransactionSql;
    try {
      c = (await lane.conn) as unknown as TransactionSql;
    } catch (error) {
      throw new NotCommitted(this.abandon(lane, error));
    }
    if (lane.dead) throw new NotCommitted(new Error("the writer's connection closed"));
    const batch = randomUUID();
    const begin = [
      c`BEGIN`.execute(),
      // An upsert, not an update: retention deletes the marks of writers idle past its window, and
      // a batch that found no row to mark would leave a lost answer unreadable (taken for aborted,
      // then applied a second time).
      c`INSERT INTO writer_marks (writer_id, batch) VALUES (${this.id}, ${batch})
        ON CONFLICT (writer_id) DO UPDATE SET batch = excluded.batch, at = now()`.execute(),
    ];
    if (ops.every((op) => op.notify !== undefined)) {
      // One round trip: the NOTIFY carries the keys the writes announced in advance.
      const announced = emptyKeys();
      for (const op of ops) mergeKeys(announced, op.notify!);
      const sent = [...begin, ...this.issue(c, ops), ...this.notifies(c, announced), c`COMMIT`.execute()];
      const results = await this.finish(lane, batch, await settle(lane, sent), ops.length);
      for (const [i, result] of results.entries()) mergeKeys(keys, ops[i]!.keys(result));
      return results;
    }
    // Two round trips: the statements, then the NOTIFY of what they wrote and COMMIT. A connection
    // lost in the first is known not to have committed.
    const first = await settle(lane, [...begin, ...this.issue(c, ops)]);
    const failed = firstFailure(first);
    if (first.lost || (failed && (lane.dead || isConnectionError(failed.reason)))) {
      throw new NotCommitted(this.abandon(lane, failed?.reason ?? new Error("the writer's connection closed")));
    }
    if (failed) {
      await c`ROLLBACK`.execute().catch(() => {});
      throw failed.reason;
    }
    const results = first.results.slice(2).map((r) => (r as PromiseFulfilledResult<unknown>).value);
    for (const [i, result] of results.entries()) mergeKeys(keys, ops[i]!.keys(result));
    const second = await settle(lane, [...this.notifies(c, keys), c`COMMIT`.execute()]);
    return this.finish(lane, batch, { results: [...first.results, ...second.results], lost: second.lost }, ops.length);
  }

  /** The batch's writes, merged where they can be (writer-merge.ts): one promise per write. */
  private issue(c: TransactionSql, ops: WriteOp<unknown>[]): Promise<unknown>[] {
    const before = this.stats.statements;
    const sent = issueWrites(c, ops, () => this.stats.statements++);
    if (this.stats.statements - before < ops.length) this.stats.merged++;
    return sent;
  }

  private notifies(c: TransactionSql, keys: CommitKeys): Promise<unknown>[] {
    const payloads = encodeKeys(this.options.origin, keys);
    this.lastNotifies = payloads.length;
    return payloads.map((p) => c`SELECT pg_notify(${this.options.channel}, ${p})`.execute());
  }

  /**
   * The batch's results once its COMMIT was sent (`s`: BEGIN, the mark, the writes, the NOTIFY and
   * COMMIT, in order). A write that fails aborts the transaction, and Postgres answers the COMMIT
   * with ROLLBACK: nothing of the batch is kept. A connection lost before the COMMIT's answer
   * leaves the batch in doubt, and the writer's mark decides.
   */
  private async finish(lane: Lane, batch: string, s: Settled, writes: number): Promise<unknown[]> {
    const commit = s.results[s.results.length - 1];
    const failed = firstFailure(s);
    const results = s.results.slice(2, 2 + writes).map((r) => (r?.status === "fulfilled" ? r.value : undefined));
    if (commit?.status === "fulfilled") {
      const command = (commit.value as { command?: string } | undefined)?.command;
      if (command === "COMMIT" && !failed) return results;
      // Answered ROLLBACK: the first failure in pipeline order is the cause, the rest its echo.
      throw failed ? failed.reason : new Error(`journal batch was not committed (${command})`);
    }
    const reason = commit?.reason ?? failed?.reason ?? new Error("the writer's connection closed");
    if (!s.lost && !lane.dead && !isConnectionError(reason)) {
      // COMMIT itself refused (a deferred check): the transaction is over and nothing was kept.
      throw failed ? failed.reason : reason;
    }
    // Only the database can say what happened.
    this.abandon(lane, reason);
    this.stats.inDoubt++;
    const fate = await resolveInDoubt(this.sql, this.id, batch, this.options.inDoubtMs ?? 15_000);
    if (fate === "aborted") throw new NotCommitted(reason);
    // Committed, but a write's answer was lost with the connection: what it returned is unknown.
    const answered = s.results.slice(2, 2 + writes).every((r) => r?.status === "fulfilled");
    if (fate === "committed" && answered) return results;
    throw new BrainError("commit_unknown", undefined, { batch });
  }

  /**
   * A connection that failed is never used again, even before its close event: a socket error
   * comes first, and a query written to the connection in between would never be answered (the
   * driver rejects nothing that reaches a closing connection after an error). Returns `cause`.
   */
  private abandon(lane: Lane, cause: unknown): unknown {
    lane.kill();
    // A backend that is still alive (a stalled statement, a socket that broke on our side only)
    // would keep its transaction and its row locks, this writer's mark among them, until it
    // noticed: every later batch would wait behind it. Ended at once instead, when it can be.
    const b = lane.backend;
    lane.backend = undefined;
    if (b) {
      void this.sql`
        SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE pid = ${b.pid} AND backend_start::text = ${b.start}`.catch(() => {});
    }
    return cause;
  }

  private async createMark(): Promise<void> {
    try {
      await this.sql`
        INSERT INTO writer_marks (writer_id, batch) VALUES (${this.id}, ${this.id}) ON CONFLICT DO NOTHING`;
    } catch (error) {
      if (isConnectionError(error)) throw new NotCommitted(error);
      throw error;
    }
    this.marked = true;
  }

  /** The live lane, or a new one in place of a lane whose connection closed. */
  private currentLane(): Lane {
    if (this.lane && !this.lane.dead) return this.lane;
    // A dead connection is abandoned, never released: postgres.js would hand it out again with
    // no socket, and the next write on it would crash the process from inside the driver.
    if (this.lane) void this.lane.pool.end({ timeout: 0 }).catch(() => {});
    const lane = openWriterLane(this.sql);
    this.lane = lane;
    return lane;
  }

  /** Drains, then closes the writer's own connection (the pool is the caller's to end). */
  async close(): Promise<void> {
    await this.drain().catch(() => {});
    const lane = this.lane;
    this.lane = undefined;
    if (!lane) return;
    if (!lane.dead) await lane.conn.then((c) => c.release()).catch(() => {});
    await lane.pool.end({ timeout: 1 }).catch(() => {});
  }

  private observe(flush: FlushInfo): void {
    try {
      this.options.observer?.(flush);
    } catch {
      // Metrics must never fail a write that has committed (nor send its batch to the fallback).
    }
  }

  private announce(keys: CommitKeys, batch: Queued[], results: unknown[]): void {
    if (keys.sessions.size === 0 && keys.hosts.size === 0 && keys.releases.size === 0) return;
    try {
      this.options.onCommit?.(keys, writtenBy(batch, results));
    } catch {
      // A subscriber's failure must not fail a write that has already committed.
    }
  }
}

/** What a committed batch wrote, per session, where every write that touched the session said. */
function writtenBy(batch: Queued[], results: unknown[]): Map<string, WrittenRecord[]> {
  const written = new Map<string, WrittenRecord[]>();
  const unknown = new Set<string>();
  for (const [i, q] of batch.entries()) {
    const w = q.op.written?.(results[i]) ?? null;
    if (w !== null && w.records.length > 0) {
      const list = written.get(w.sessionId);
      if (list) list.push(...w.records);
      else written.set(w.sessionId, [...w.records]);
    }
    for (const id of q.op.keys(results[i]).sessions.keys()) if (w === null || w.sessionId !== id) unknown.add(id);
  }
  for (const id of unknown) written.delete(id);
  return written;
}

function unavailable(): BrainError {
  return new BrainError("database_unavailable");
}

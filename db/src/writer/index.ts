import { randomUUID } from "node:crypto";
import { BrainError, hop } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import type { DatabaseAvailability } from "../availability.js";
import { type CommitKeys, emptyKeys, mergeKeys } from "../commit-keys.js";
import { type BatchOutcome, batchOutcome, type MarkRule, sendOneTrip } from "./batch.js";
import { WriterConnection } from "./connection.js";
import { type Lane, type Settled, settle } from "./lane.js";
import type { WriteOp, WrittenRecord } from "./write-op.js";

export type { WriteOp, WrittenRecord } from "./write-op.js";

/** A one-round-trip batch sent and not yet answered. */
interface Flight {
  batch: Queued[];
  /** The batch's mark. */
  id: string;
  lane: Lane;
  started: number;
  notifies: number;
  answers: Promise<Settled>;
  watchdog: NodeJS.Timeout;
  /** Its writes are answered: only its NOTIFY and COMMIT are left. */
  written?: boolean;
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
  /** One-round-trip batches sent and not yet answered, at most (default 2; 1 sends each after the last's answer). */
  maxInFlight?: number;
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
  /**
   * The tables are distributed on a Citus cluster (db/src/citus.ts; default false). Each append and
   * call transition is then a statement of its own, delegated whole to the worker holding its
   * session (ops/on-session-shards.ts), and a batch is a transaction with BEGIN and COMMIT, never
   * a pipeline: Citus commits a statement of an implicit transaction on its worker at once, so a
   * batch that failed or was lost later would keep it.
   */
  citus?: boolean;
}

/** One committed batch, as the writer's observer sees it. */
export interface FlushInfo {
  /** Writes committed in the batch's transaction. */
  writes: number;
  /** NOTIFYs sent with it (one, or more past 8000 bytes of keys; none when it touched no key). */
  notifies: number;
  /** Milliseconds from the batch sent to the answer of its commit. */
  ms: number;
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
 * writer's own connection: the mark, the statements and the NOTIFY as one pipeline, which Postgres
 * runs as one implicit transaction, commits at its end and answers once (batch.ts). Any
 * other batch takes two: BEGIN, the mark and the statements; then the NOTIFY (from what the
 * statements wrote) and COMMIT. When the connection dies before the commit was asked, nothing was
 * written and the batch is tried once more on a new connection (a terminated backend, a restart
 * that is already over); after, the mark says whether it committed (see in-doubt.ts), and the
 * batch is either known committed (its results are already in hand) or known not, and never
 * applied twice. While the database is away, writes fail at once with `database_unavailable`;
 * only a batch whose fate the database never comes back to tell fails with `commit_unknown`.
 *
 * One-round-trip batches are also sent one behind another (`maxInFlight`, 2 by default): the next
 * batch leaves as soon as the one before it is written, so Postgres runs it while this process
 * handles the answers of the one before, instead of each waiting for the other. Order is kept by
 * the connection (Postgres runs them in order) and by the mark: a batch sent behind another moves
 * the mark on from that batch's id, and fails if it is not there (see beginBatch), so no batch
 * commits unless every batch before it did. Answers are handled in the order sent; a batch that
 * did not commit sends every batch behind it back to the queue, after its own writes' retry.
 */
export class JournalWriter {
  private queue: Queued[] = [];
  private flushing = false;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  /** One-round-trip batches sent and not yet answered, oldest first (see launch). */
  private flights: Flight[] = [];
  /** A batch is due to go out behind the newest one at the end of this turn of the event loop. */
  private behindScheduled = false;
  /** Its own connection, its mark, and the transaction of a batch that runs alone. */
  private readonly connection: WriterConnection;
  /** Statistics for benchmarks and diagnostics. */
  readonly stats = {
    batches: 0,
    writes: 0,
    /** Statements the writes took (fewer than writes when some shared one). */
    statements: 0,
    /** Batches in which some writes shared a statement. */
    merged: 0,
    /** Batches sent while another was still unanswered. */
    pipelined: 0,
    /** Writes sent back to the queue because a batch ahead of theirs did not commit. */
    requeued: 0,
    fallbacks: 0,
    retries: 0,
    inDoubt: 0,
    stalls: 0,
  };

  constructor(
    sql: Sql,
    private readonly options: WriterOptions,
  ) {
    this.connection = new WriterConnection(sql, options, this.stats);
    this.maxBatch = options.maxBatch ?? 256;
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
  }

  submit<R>(op: WriteOp<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushing) void this.flush();
      else if (!this.behindScheduled && this.flights.at(-1)?.written) {
        // The newest batch's writes are answered and nothing has gone out behind it yet: what is
        // submitted until the end of this turn of the event loop goes now.
        this.behindScheduled = true;
        setImmediate(() => {
          this.behindScheduled = false;
          const newest = this.flights.at(-1);
          if (newest) this.sendBehind(newest);
        });
      }
    });
  }

  /** Resolves once everything submitted so far has committed or failed. */
  async drain(): Promise<void> {
    await this.submit({ keys: emptyKeys, run: async () => undefined });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    try {
      for (;;) {
        if (this.queue.length > 0 && this.options.availability && !this.options.availability.available) {
          // Fail fast: the database is away, and queued writes would only wait for timeouts.
          for (const q of this.queue.splice(0)) q.reject(unavailable());
        }
        const n = this.launchable();
        if (n > 0) {
          this.launch(this.queue.splice(0, n));
          continue;
        }
        const oldest = this.flights[0];
        if (oldest) {
          await this.land(oldest);
          continue;
        }
        if (this.queue.length === 0) break;
        // Nothing in flight: a batch that must run alone, or the first on a new connection.
        let m = 1;
        if (!this.queue[0]!.op.exclusive) {
          while (m < this.queue.length && m < this.maxBatch && !this.queue[m]!.op.exclusive) m++;
        }
        await this.commitBatch(this.queue.splice(0, m));
      }
    } finally {
      this.flushing = false;
    }
  }

  /**
   * How many queued writes the next batch sent behind the others takes: the leading writes that
   * announce their keys (one round trip), when there is room in flight and an open connection
   * whose mark is in place; 0 when the queue must wait for the flights to land.
   */
  private launchable(): number {
    if (!this.connection.pipelines || this.flights.length >= this.maxInFlight) return 0;
    const open = this.connection.ready();
    if (!open) return 0;
    const last = this.flights.at(-1);
    if (last && last.lane !== open.lane) return 0;
    let n = 0;
    while (n < this.queue.length && n < this.maxBatch) {
      const op = this.queue[n]!.op;
      if (op.exclusive || op.notify === undefined) break;
      n++;
    }
    return n;
  }

  /** Sends a one-round-trip batch behind whatever is in flight; its answers are read by land(). */
  private launch(batch: Queued[]): void {
    const { lane, c } = this.connection.ready()!;
    const previous = this.flights.at(-1);
    const id = randomUUID();
    const ops = batch.map((q) => q.op);
    const rule: MarkRule = previous ? { kind: "after", previous: previous.id } : { kind: "upsert" };
    if (previous) this.stats.pipelined++;
    const { sent, notifies, lastWrite } = sendOneTrip(
      c,
      { writerId: this.connection.id, id, rule },
      ops,
      this.options,
      this.stats,
    );
    hop("writer.batch-sent");
    const flight: Flight = {
      batch,
      id,
      lane,
      started: performance.now(),
      notifies,
      answers: settle(lane, sent),
      watchdog: this.connection.watch(lane),
    };
    this.flights.push(flight);
    // Once its writes are answered, Postgres has only its NOTIFY and COMMIT left: the next batch,
    // gathered meanwhile, is sent then (or as soon as a write comes, see submit), to be run right
    // after it while this process handles its answers.
    const done = () => {
      flight.written = true;
      this.sendBehind(flight);
    };
    void lastWrite.then(done, done);
  }

  /**
   * The newest batch in flight is nearly done: what has gathered since goes out behind it, once it
   * is as large as that batch. A smaller one waits for the answers instead: on a connection with
   * no round trip worth hiding (Postgres on the same machine), sending each small gathering early
   * only splits the work into more commits, each with its mark, NOTIFY and WAL flush (about
   * a tenth more CPU a tool call, for no more throughput); across a network, a whole batch gathers
   * while the one ahead travels.
   */
  private sendBehind(newest: Flight): void {
    if (this.flights.at(-1) !== newest) return;
    const n = this.launchable();
    if (n >= newest.batch.length) this.launch(this.queue.splice(0, n));
  }

  /**
   * The answers of the oldest batch in flight. Committed: its writes resolve. Otherwise every batch
   * behind it is in the same state or worse (each needs the one before it), and the writes of all
   * of them are settled in order: the batch's own through the one-by-one fallback or a retry, then
   * those of the batches behind it, back at the head of the queue.
   */
  private async land(f: Flight): Promise<void> {
    // It stays first in `flights` until answered: a batch may still be sent behind it meanwhile.
    const s = await f.answers;
    clearTimeout(f.watchdog);
    this.flights.shift();
    const outcome = batchOutcome(f.lane, s, f.batch.length, true);
    if (outcome.kind === "committed") {
      this.committed(f.batch, outcome.results, f.started, f.notifies);
      return;
    }
    const behind = this.flights.splice(0);
    if (outcome.kind === "refused") {
      for (const b of behind) clearTimeout(b.watchdog);
      await this.fallBack(f.batch, outcome.error);
      const writes = behind.flatMap((b) => b.batch);
      this.stats.requeued += writes.length;
      this.queue.unshift(...writes);
      return;
    }
    await this.landLost([f, ...behind], outcome);
  }

  /**
   * The connection was lost with batches in flight: the mark names the last of them that committed
   * (each moved it on from the one before). Those up to it are committed: their writes resolve,
   * unless an answer was lost with the connection (`commit_unknown`). Those after it are not, and
   * are tried once more, in order, on a new connection.
   */
  private async landLost(chain: Flight[], first: Extract<BatchOutcome, { kind: "lost" }>): Promise<void> {
    this.connection.abandon(chain[0]!.lane, first.reason);
    this.options.availability?.observe(first.reason);
    this.stats.inDoubt++;
    const outcomes: BatchOutcome[] = [first];
    for (const b of chain.slice(1)) {
      outcomes.push(batchOutcome(b.lane, await b.answers, b.batch.length, true));
      clearTimeout(b.watchdog);
    }
    const mark = await this.connection.readMark();
    const last = mark === undefined ? -1 : chain.findIndex((b) => b.id === mark);
    for (const [i, b] of chain.entries()) {
      const o = outcomes[i]!;
      if (mark === undefined) {
        for (const q of b.batch) q.reject(new BrainError("commit_unknown", undefined, { batch: b.id }));
      } else if (i <= last) {
        if (o.kind === "lost" && !o.answered) {
          for (const q of b.batch) q.reject(new BrainError("commit_unknown", undefined, { batch: b.id }));
        } else if (o.kind === "refused") {
          // Answered as not committed, yet named by the mark: nothing can be said of its writes.
          for (const q of b.batch) q.reject(new BrainError("commit_unknown", undefined, { batch: b.id }));
        } else this.committed(b.batch, o.results, b.started, b.notifies);
      } else {
        this.stats.retries++;
        await this.commitBatch(b.batch, 1);
      }
    }
  }

  /** A batch known not to have committed, for `error`: each write is tried alone (unless that cannot help). */
  private async fallBack(batch: Queued[], error: unknown): Promise<void> {
    // One by one only helps against a bad statement; against the database itself it would not.
    if (batch.length === 1 || error instanceof BrainError) {
      for (const q of batch) q.reject(error);
      return;
    }
    this.stats.fallbacks++;
    for (const q of batch) await this.commitBatch([q]);
  }

  /** A batch that runs alone: nothing else in flight. `firstAttempt` 1: it is already the retry. */
  private async commitBatch(batch: Queued[], firstAttempt = 0): Promise<void> {
    const started = performance.now();
    let sent: { results: unknown[]; notifies: number };
    hop("writer.batch-sent");
    try {
      sent = await this.connection.runAlone(
        batch.map((q) => q.op),
        firstAttempt,
      );
    } catch (error) {
      await this.fallBack(batch, error);
      return;
    }
    this.committed(batch, sent.results, started, sent.notifies);
  }

  /** A batch committed: its writes resolve, its keys are announced, and the observer is told. */
  private committed(batch: Queued[], results: unknown[], started: number, notifies: number): void {
    hop("writer.batch-committed");
    for (const [i, q] of batch.entries()) {
      if (!q.op.committed) continue;
      try {
        q.op.committed(results[i]);
      } catch {
        // The write has committed: what its hook failed to do is its own caller's to notice.
      }
    }
    this.stats.batches++;
    this.stats.writes += batch.length;
    const keys = emptyKeys();
    for (const [i, q] of batch.entries()) {
      q.resolve(results[i]);
      mergeKeys(keys, q.op.keys(results[i]));
    }
    this.announce(keys, batch, results);
    this.observe({ writes: batch.length, notifies, ms: performance.now() - started });
  }

  /** Drains, then closes the writer's own connection (the pool is the caller's to end). */
  async close(): Promise<void> {
    await this.drain().catch(() => {});
    await this.connection.close();
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

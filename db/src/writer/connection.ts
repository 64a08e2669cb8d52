import { randomUUID } from "node:crypto";
import { BrainError } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import { type DatabaseAvailability, isConnectionError } from "../availability.js";
import { emptyKeys, mergeKeys } from "../commit-keys.js";
import { lanesHoldSessions } from "../connect.js";
import { tables } from "../tables.js";
import { batchOutcome, beginBatch, issueBatchWrites, notifyKeys, sendOneTrip } from "./batch.js";
import { readMark, resolveInDoubt } from "./in-doubt.js";
import { firstFailure, type Lane, openWriterLane, type Settled, settle } from "./lane.js";
import type { WriteOp } from "./write-op.js";

/** What the writer's connection needs of the writer's options. */
export interface ConnectionOptions {
  channel: string;
  origin: string;
  availability?: DatabaseAvailability;
  inDoubtMs?: number;
  stallMs?: number;
  citus?: boolean;
}

/** The writer's counters this side updates. */
export interface ConnectionStats {
  statements: number;
  merged: number;
  retries: number;
  inDoubt: number;
  stalls: number;
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
 * The journal writer's own connection (its lane), the writer's mark, and the transaction of a
 * batch that runs alone (nothing else in flight): one round trip or two, tried once more on a new
 * connection when the first is lost before COMMIT, and decided by the mark when lost after.
 */
export class WriterConnection {
  /** This writer's row in writer_marks; created before its first batch, and by any batch that finds it gone. */
  readonly id = randomUUID();
  private current: Lane | undefined;
  private marked = false;

  /**
   * Whether batches may go as one pipeline. Not through a pooler in transaction mode (no direct
   * URL): PgBouncer 1.18 loses answers to a pipeline whose statements are described first. Not on
   * a Citus cluster (WriterOptions.citus): a pipeline is no transaction block to Citus, which
   * commits each of its statements on the worker at once.
   */
  readonly pipelines: boolean;

  constructor(
    private readonly sql: Sql,
    private readonly options: ConnectionOptions,
    private readonly stats: ConnectionStats,
  ) {
    this.pipelines = lanesHoldSessions(sql) && !options.citus;
  }

  /**
   * The open connection a batch can be sent on at once, behind whatever is in flight: only once
   * connected and marked (the first batch, and the first after a lost connection, run alone).
   */
  ready(): { lane: Lane; c: TransactionSql } | undefined {
    const lane = this.current;
    if (!this.marked || !lane || lane.dead || !lane.ready) return undefined;
    return { lane, c: lane.ready as unknown as TransactionSql };
  }

  /** The mark, once the database answers (see readMark). */
  readMark(): Promise<string | null | undefined> {
    return readMark(this.sql, this.id, this.options.inDoubtMs ?? 15_000);
  }

  /**
   * Runs one batch's transaction alone; `firstAttempt` 1: it is already the retry. Throws when it
   * did not commit (the database's error, `database_unavailable`, or `commit_unknown`).
   */
  async runAlone(ops: WriteOp<unknown>[], firstAttempt = 0): Promise<{ results: unknown[]; notifies: number }> {
    for (let attempt = firstAttempt; ; attempt++) {
      try {
        // Committed on its own before any batch: a batch's mark is then an update of a row that
        // exists, whose lock tells a later reader to wait for the batch's outcome (unless retention
        // deleted the row meanwhile: then the batch inserts it, and the reader waits on that insert).
        if (!this.marked) await this.createMark();
        return await this.attempt(ops);
      } catch (error) {
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

  private async attempt(ops: WriteOp<unknown>[]): Promise<{ results: unknown[]; notifies: number }> {
    const lane = this.lane();
    const watchdog = this.watch(lane);
    try {
      return await this.transact(lane, ops);
    } finally {
      clearTimeout(watchdog);
    }
  }

  private async transact(lane: Lane, ops: WriteOp<unknown>[]): Promise<{ results: unknown[]; notifies: number }> {
    let c: TransactionSql;
    try {
      c = (await lane.conn) as unknown as TransactionSql;
    } catch (error) {
      throw new NotCommitted(this.abandon(lane, error));
    }
    if (lane.dead) throw new NotCommitted(new Error("the writer's connection closed"));
    const batch = randomUUID();
    if (this.pipelines && ops.every((op) => op.notify !== undefined)) {
      // One round trip: the NOTIFY carries the keys the writes announced in advance.
      const one = sendOneTrip(
        c,
        { writerId: this.id, id: batch, rule: { kind: "upsert" } },
        ops,
        this.options,
        this.stats,
      );
      const results = await this.finish(lane, batch, await settle(lane, one.sent), ops.length, true);
      return { results, notifies: one.notifies };
    }
    // Two round trips: the statements, then the NOTIFY of what they wrote and COMMIT. A connection
    // lost in the first is known not to have committed.
    const begin = beginBatch(c, this.id, batch, { kind: "upsert" });
    const first = await settle(lane, [...begin, ...issueBatchWrites(c, ops, this.stats, this.options.citus)]);
    const failed = firstFailure(first);
    if (first.lost || (failed && (lane.dead || isConnectionError(failed.reason)))) {
      throw new NotCommitted(this.abandon(lane, failed?.reason ?? new Error("the writer's connection closed")));
    }
    if (failed) {
      await c`ROLLBACK`.execute().catch(() => {});
      throw failed.reason;
    }
    const results = first.results.slice(2).map((r) => (r as PromiseFulfilledResult<unknown>).value);
    const keys = emptyKeys();
    for (const [i, result] of results.entries()) mergeKeys(keys, ops[i]!.keys(result));
    const notifies = notifyKeys(c, this.options.channel, this.options.origin, keys);
    const second = await settle(lane, [...notifies, c`COMMIT`.execute()]);
    const all = { results: [...first.results, ...second.results], lost: second.lost };
    return { results: await this.finish(lane, batch, all, ops.length, false), notifies: notifies.length };
  }

  /**
   * The batch's results once its COMMIT was sent (see batchOutcome). A connection lost before the
   * COMMIT's answer leaves the batch in doubt, and the writer's mark decides.
   */
  private async finish(lane: Lane, batch: string, s: Settled, writes: number, pipeline: boolean): Promise<unknown[]> {
    const outcome = batchOutcome(lane, s, writes, pipeline);
    if (outcome.kind === "committed") return outcome.results;
    if (outcome.kind === "refused") throw outcome.error;
    // Only the database can say what happened.
    this.abandon(lane, outcome.reason);
    this.stats.inDoubt++;
    const fate = await resolveInDoubt(this.sql, this.id, batch, this.options.inDoubtMs ?? 15_000);
    if (fate === "aborted") throw new NotCommitted(outcome.reason);
    // Committed, but a write's answer was lost with the connection: what it returned is unknown.
    if (fate === "committed" && outcome.answered) return outcome.results;
    throw new BrainError("commit_unknown", undefined, { batch });
  }

  /**
   * Cuts the connection when a transaction on it goes unanswered for `stallMs`: that rejects
   * whatever it still owes, which before COMMIT means not committed, and after it, in doubt.
   */
  watch(lane: Lane): NodeJS.Timeout {
    return setTimeout(() => {
      this.stats.stalls++;
      this.abandon(lane, null);
      void lane.pool.end({ timeout: 0 }).catch(() => {});
    }, this.options.stallMs ?? 60_000);
  }

  /**
   * A connection that failed is never used again, even before its close event: a socket error
   * comes first, and a query written to the connection in between would never be answered (the
   * driver rejects nothing that reaches a closing connection after an error). Returns `cause`.
   */
  abandon(lane: Lane, cause: unknown): unknown {
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
    const brain = tables(this.sql);
    try {
      await this.sql`
        INSERT INTO ${brain.writer_marks} (writer_id, batch) VALUES (${this.id}, ${this.id}) ON CONFLICT DO NOTHING`;
    } catch (error) {
      if (isConnectionError(error)) throw new NotCommitted(error);
      throw error;
    }
    this.marked = true;
  }

  /** The live lane, or a new one in place of a lane whose connection closed. */
  private lane(): Lane {
    if (this.current && !this.current.dead) return this.current;
    // A dead connection is abandoned, never released: postgres.js would hand it out again with
    // no socket, and the next write on it would crash the process from inside the driver.
    if (this.current) void this.current.pool.end({ timeout: 0 }).catch(() => {});
    const lane = openWriterLane(this.sql, this.options.citus);
    this.current = lane;
    return lane;
  }

  /** Closes the connection (the pool is the caller's to end). */
  async close(): Promise<void> {
    const lane = this.current;
    this.current = undefined;
    if (!lane) return;
    if (!lane.dead) await lane.conn.then((c) => c.release()).catch(() => {});
    await lane.pool.end({ timeout: 1 }).catch(() => {});
  }
}

function unavailable(): BrainError {
  return new BrainError("database_unavailable");
}

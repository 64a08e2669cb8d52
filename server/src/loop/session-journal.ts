import { payloadOf } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import { type Appended, appendRecords, type NewRecord, readRecords, resolveRelative } from "@aexhq/brain-db/ops";
import type { WrittenRecord } from "@aexhq/brain-db/writer";
import type { FoldedRecord } from "../metrics/sink.js";
import type { Services } from "../services.js";
import { announcedAsLoop } from "./own-message.js";
import { FOLDED_KINDS, fold, initialState, type LoopState } from "./state.js";
import { withWorkerJobs } from "./worker-jobs.js";

export type JournalDeps = Pick<Services, "boss" | "deadlineJobs" | "metrics" | "sql" | "turns" | "writer">;

/**
 * An append was given sequences this Agentloop had already folded: the database lost the end of
 * the journal (a fail-over to a standby that never received it). The state is wrong from here
 * on; the Agentloop stops and is read again from the journal the database has.
 */
export class JournalBehind extends Error {
  constructor(
    readonly sessionId: string,
    readonly written: number,
    readonly folded: number,
  ) {
    super(`session ${sessionId}: the journal went back to ${written - 1} from ${folded}`);
  }
}

/** Records heard and not yet folded beyond which the journal is read instead. */
const MAX_HEARD = 256;

/**
 * One session's journal as its actor knows it: the folded state, and how records reach it — its
 * own appends (folded as written), records this process's writer heard itself commit (folded
 * without reading them back), or a read. Every append carries the actor's fencing epoch.
 */
export class SessionJournal {
  readonly state: LoopState = initialState();
  /**
   * Set once the first catch-up has replayed the journal: records folded from then on happened
   * while this server ran the session, and are counted in its metrics (a takeover's replay is not).
   */
  private live = false;
  /** When each call still open started (epoch ms), as folded live: its latency for the metrics. */
  private readonly callStarts = new Map<number, number>();
  /**
   * Records this process's writer wrote to the session and described (bus.ts), in commit order:
   * folded without reading them back. Only while `unsure` is false do they stand for the journal;
   * any other wake (another process's commit, a write that did not describe its records, a
   * rescan, a claim) sets it, and the next catch-up reads.
   */
  private readonly heardRecords: WrittenRecord[] = [];
  private unsure = true;

  constructor(
    private readonly rt: JournalDeps,
    private readonly sessionId: string,
    private readonly epoch: number,
    /** The session's owner: the pg-boss group of its worker calls. */
    private readonly tokenId: string | null,
  ) {}

  /** The next catch-up reads the journal (a claim, a rescan). */
  distrust(): void {
    this.unsure = true;
  }

  /**
   * A commit touched the session: `records` is what it wrote, when this process wrote and
   * described all of it; undefined means the journal must be read.
   */
  heard(records: WrittenRecord[] | undefined): void {
    if (records === undefined || this.heardRecords.length + records.length > MAX_HEARD) {
      // Unknown, or more than an idle session should hold on to: the next catch-up reads.
      this.unsure = true;
      this.heardRecords.length = 0;
      return;
    }
    for (const r of records) {
      if (r.seq <= this.state.lastSeq) continue;
      // Emissions and the like only advance the sequence: their data is not held on to.
      this.heardRecords.push(
        FOLDED_KINDS.has(r.kind) ? r : { seq: r.seq, kind: r.kind, payload: null, createdAt: r.createdAt },
      );
    }
  }

  /**
   * Folds what the journal holds beyond the state: the records heard from this process's writer
   * when they are all there is (nothing unsure, no gap, at least up to `through`), else what a
   * read returns.
   */
  async catchUp(through = 0): Promise<void> {
    const heard = this.heardRecords.splice(0);
    for (const r of heard) {
      if (r.seq <= this.state.lastSeq) continue;
      if (r.seq !== this.state.lastSeq + 1) {
        this.unsure = true;
        break;
      }
      this.apply(r.seq, r.kind, r.payload, r.createdAt);
    }
    if (!this.unsure && this.live && this.state.lastSeq >= through) {
      this.rt.metrics.caughtUp("heard");
      return;
    }
    this.rt.metrics.caughtUp("read");
    // Cleared before the read: a wake that arrives while it runs sets it again.
    this.unsure = false;
    for (;;) {
      const rows = await readRecords(this.rt.sql as Sql, this.sessionId, this.state.lastSeq, 1000);
      for (const r of rows) this.apply(r.seq, r.kind, r.payload, r.created_at);
      if (rows.length < 1000) {
        this.live = true;
        return;
      }
    }
  }

  /**
   * Appends with the fencing epoch and folds what was written; null when the guard refused
   * (fenced, or the session ended). `ownMessage`: the records carry a user message the actor
   * takes itself (see announcedAsLoop). `committed`: called with what was written as soon as the
   * commit is known, before this resumes (WriteOp.committed).
   */
  async append(
    records: NewRecord[],
    ownMessage = false,
    committed?: (written: Appended[]) => void,
  ): Promise<Appended[] | null> {
    const deadlines: number[] = [];
    for (const r of records)
      if (r.call?.deadlineAt != null && r.call.state !== "ended") deadlines.push(r.call.deadlineAt);
    let op = appendRecords(this.sessionId, records, { epoch: this.epoch });
    if (ownMessage) op = announcedAsLoop(this.sessionId, op);
    op = withWorkerJobs(this.rt.boss, { id: this.sessionId, tokenId: this.tokenId }, records, op);
    if (deadlines.length > 0) op = this.rt.deadlineJobs.wrap(op, deadlines);
    // Last, so that no wrapper above has to carry it.
    if (committed) op = { ...op, committed: (r) => committed(r.records) };
    const result = await this.rt.writer.submit(op);
    if (result.records.length === 0) return null;
    const written = result.records;
    if (written[0]!.seq <= this.state.lastSeq)
      throw new JournalBehind(this.sessionId, written[0]!.seq, this.state.lastSeq);
    const seqs = written.map((r) => r.seq);
    const payloads = records.map((r, i) => resolveRelative(r.payload, i, seqs));
    if (written[0]!.seq !== this.state.lastSeq + 1) await this.catchUp(written[written.length - 1]!.seq);
    else
      for (let i = 0; i < written.length; i++)
        this.apply(written[i]!.seq, written[i]!.kind, payloads[i], written[i]!.createdAt);
    // Its own records were heard too (the commit is announced before this resumes): let them go.
    const heard = this.heardRecords;
    let kept = 0;
    while (kept < heard.length && heard[kept]!.seq <= this.state.lastSeq) kept++;
    if (kept > 0) heard.splice(0, kept);
    for (let i = 0; i < written.length; i++) {
      const end = payloadOf({ kind: written[i]!.kind, payload: payloads[i] }, "activation_ended");
      if (end) this.rt.turns.emit(this.sessionId, written[i]!.seq, end);
    }
    return written;
  }

  /** Folds one record into the state, and tells the metrics of a record that happened live. */
  private apply(seq: number, kind: string, payload: unknown, at: Date): void {
    if (seq <= this.state.lastSeq) return;
    // Read before the fold: an ending call the model has seen leaves `calls` in it.
    const ending = payloadOf({ kind, payload }, "tool_call_ended")?.call ?? null;
    const endingTool = ending === null ? undefined : this.state.calls.get(ending)?.tool;
    fold(this.state, { seq, kind, payload });
    if (!this.live) return;
    const record: FoldedRecord = { sessionId: this.sessionId, seq, kind, payload, at: at.getTime() };
    if (kind === "tool_call_started") {
      record.tool = this.state.calls.get(seq)?.tool;
      this.callStarts.set(seq, record.at);
    } else if (ending !== null) {
      record.tool = endingTool;
      record.startedAt = this.callStarts.get(ending);
      this.callStarts.delete(ending);
    }
    this.rt.metrics.record(record);
  }
}

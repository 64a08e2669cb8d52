import type { Sql } from "postgres";
import type { MeasureResult } from "../scenarios/host-protocol.js";

/**
 * Reads a session's journal back after a measurement and splits each turn into segments on one
 * clock: the records' created_at (Postgres clock_timestamp(), taken when each row is inserted,
 * i.e. before its transaction's NOTIFY and COMMIT) and the host's wall clock (clock.ts), both
 * CLOCK_REALTIME on this machine.
 */

export interface JournalRow {
  seq: number;
  kind: string;
  payload: unknown;
  /** created_at, epoch ms with microseconds. */
  ms: number;
  /** The inserting transaction (xmin): records with the same xid were committed together. */
  xid: string;
}

export async function readJournal(sql: Sql, sessionId: string): Promise<JournalRow[]> {
  return sql<JournalRow[]>`
    SELECT seq::float8 AS seq, kind, payload, (extract(epoch FROM created_at) * 1000)::float8 AS ms,
           xmin::text AS xid
    FROM brain.records WHERE session_id = ${sessionId} ORDER BY seq`;
}

/** The records of one turn, from its user_message to the next one. */
export interface TurnRecords {
  rows: JournalRow[];
  first(kind: string, after?: number): JournalRow | undefined;
}

export function splitTurns(rows: JournalRow[]): TurnRecords[] {
  const turns: JournalRow[][] = [];
  for (const row of rows) {
    if (row.kind === "user_message") turns.push([]);
    turns[turns.length - 1]?.push(row);
  }
  return turns.map((t) => ({
    rows: t,
    first: (kind: string, after = 0) => t.find((r) => r.kind === kind && r.seq > after),
  }));
}

export interface Segments {
  /** Named durations in ms, one array per segment, in the order of the turn. */
  segments: Map<string, number[]>;
  /** Segments whose two records were (mostly) written by the same transaction. */
  sameCommit: Set<string>;
  /** Distinct transactions that wrote each turn's records: the commits on a turn's path. */
  commitsPerTurn: number[];
  /** Wake windows from model_call_started.payload.wake (firedAt - openedAt; whole ms). */
  wakeMs: number[];
  /** turn latency minus its wake window. */
  restMs: number[];
  /** tool_call_started.created_at → handler entered. */
  dispatchMs: number[];
  /** tool_call_started.created_at → tool_call_ended.created_at: a call's durable round trip. */
  callMs: number[];
  problems: string[];
}

/** Lines a measured run's turns up with their journal records (the last N turns are the measured ones). */
export function segment(rows: JournalRow[], measured: MeasureResult): Segments {
  const all = splitTurns(rows);
  const turns = all.slice(all.length - measured.turns.length);
  const entered = new Map(measured.handlers.map((h) => [h.seq, h.enteredAt]));
  const segments = new Map<string, number[]>();
  const same = new Map<string, number>();
  const add = (name: string, ms: number, a?: JournalRow, b?: JournalRow) => {
    const list = segments.get(name) ?? [];
    list.push(ms);
    segments.set(name, list);
    if (a && b && a.xid === b.xid) same.set(name, (same.get(name) ?? 0) + 1);
  };
  const out: Segments = {
    segments,
    sameCommit: new Set(),
    commitsPerTurn: [],
    wakeMs: [],
    restMs: [],
    dispatchMs: [],
    callMs: [],
    problems: [],
  };
  turns.forEach((t, i) => {
    const turn = measured.turns[i]!;
    const user = t.first("user_message");
    const mcs1 = t.first("model_call_started");
    const started = t.first("tool_call_started");
    const ended = t.first("activation_ended");
    if (!user || !mcs1 || !ended) {
      if (out.problems.length < 10) out.problems.push(`turn ${i}: incomplete journal (${t.rows.map((r) => r.kind)})`);
      return;
    }
    out.commitsPerTurn.push(new Set(t.rows.map((r) => r.xid)).size);
    add("send → user_message", user.ms - turn.start);
    add("user_message → model_call_started", mcs1.ms - user.ms, user, mcs1);
    if (started) {
      const callEnded = t.first("tool_call_ended", started.seq);
      const mcs2 = t.first("model_call_started", started.seq);
      const handler = entered.get(started.seq);
      add("model_call_started → tool_call_started", started.ms - mcs1.ms, mcs1, started);
      if (handler !== undefined) {
        const dispatch = handler - started.ms;
        out.dispatchMs.push(dispatch);
        add("tool_call_started → handler entered", dispatch);
        if (callEnded) add("handler entered → tool_call_ended", callEnded.ms - handler);
      } else if (out.problems.length < 10) out.problems.push(`turn ${i}: no handler entry for seq ${started.seq}`);
      if (callEnded) out.callMs.push(callEnded.ms - started.ms);
      if (callEnded && mcs2) {
        add("tool_call_ended → model_call_started (wake)", mcs2.ms - callEnded.ms, callEnded, mcs2);
        const wake = (mcs2.payload as { wake?: { openedAt: number; firedAt: number } }).wake;
        if (wake) {
          out.wakeMs.push(wake.firedAt - wake.openedAt);
          out.restMs.push(turn.end - turn.start - (wake.firedAt - wake.openedAt));
        } else if (out.problems.length < 10) out.problems.push(`turn ${i}: model_call_started without wake`);
        add("model_call_started → activation_ended", ended.ms - mcs2.ms, mcs2, ended);
      }
    } else {
      add("model_call_started → activation_ended", ended.ms - mcs1.ms, mcs1, ended);
    }
    add("activation_ended → answer", turn.end - ended.ms);
  });
  for (const [name, list] of segments) if ((same.get(name) ?? 0) > list.length / 2) out.sameCommit.add(name);
  return out;
}

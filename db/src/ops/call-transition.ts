import type { TransactionSql } from "postgres";
import type { CallKey } from "../call-key.js";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import { lazyRecord, storedRecord } from "../jsonb-order.js";
import { isDistributed, tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { onSessionShards } from "./on-session-shards.js";
import { uuidKey } from "./uuid-key.js";

/** What a host (or a worker) reports about one open call. */
export type CallAction =
  | { type: "emit"; kind: string; data: unknown }
  | { type: "result"; outcome: { status: string }; content?: string | undefined }
  | { type: "return"; outcome?: { status: string } | undefined; content?: string | undefined }
  | { type: "finish"; outcome?: { status: string } | undefined; content?: string | undefined };

/** A call as a host names it: its frames match only calls dispatched to that host. */
export type HostCallRef = CallKey & { hostId: string };

/** A call as a worker names it: by the connection it claimed the call on. */
export type ConnectionCallRef = CallKey & { connectionId: string };

/** Who reports (or asks on behalf of a call): a host names itself, a worker its connection. */
export type CallRef = HostCallRef | ConnectionCallRef;

/** `seq` is the last record written; null when the call was not open (ended or not this host's). */
export interface TransitionResult {
  seq: number | null;
  ended: boolean;
  /** Nothing was written because the activation's emission budget would be exceeded. */
  overBudget: boolean;
  bytes: number;
  /** The call's outcome once this report ended it (the terminal record's), else undefined. */
  outcome?: unknown;
  /** When the report's records were written. */
  writtenAt?: Date;
}

interface Plan {
  records: { kind: string; payload: unknown }[];
  ends: boolean;
  returns: boolean;
  outcome: unknown;
}

/** Whether an action, once journaled, ends its call: a finish, or any non-success outcome. */
export function endsCall(action: CallAction): boolean {
  if (action.type === "emit") return false;
  // A non-success outcome terminates the execution, whichever way it was published.
  return action.type === "finish" || (action.outcome !== undefined && action.outcome.status !== "ok");
}

function plan(call: number, action: CallAction): Plan {
  if (action.type === "emit") {
    return {
      records: [{ kind: action.kind, payload: { call, data: action.data } }],
      ends: false,
      returns: false,
      outcome: null,
    };
  }
  const records: Plan["records"] = [];
  const outcome = action.outcome ?? null;
  if (action.outcome) {
    const payload: Record<string, unknown> = { call, outcome: action.outcome };
    if (action.content !== undefined) payload.content = action.content;
    records.push({ kind: "tool_result", payload });
  }
  const returns = action.type === "return";
  if (returns) records.push({ kind: "tool_returned", payload: { call } });
  const ends = endsCall(action);
  // The terminal payload is filled in by SQL: it is the call's final outcome, which may be an
  // earlier result's.
  if (ends) records.push({ kind: "tool_call_ended", payload: null });
  return { records, ends, returns, outcome };
}

/** Bytes an action charges to its activation's budget: each emission's kind plus its payload. */
export function emittedBytes(action: CallAction): number {
  const size = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? "", "utf8");
  if (action.type === "emit") return Buffer.byteLength(action.kind, "utf8") + size(action.data);
  if (!action.outcome) return 0;
  const content = action.content === undefined ? 0 : Buffer.byteLength(action.content, "utf8");
  return Buffer.byteLength("tool_result", "utf8") + size(action.outcome) + content;
}

/** One transition's part of the statement's input (see transitionStatement). */
interface TransitionInput {
  sid: string;
  seq: number;
  host: string | null;
  conn: string | null;
  records: { kind: string; payload: unknown }[];
  ends: boolean;
  returns: boolean;
  outcome?: unknown;
  bytes: number;
}

/**
 * Applies one host report to an open call and journals it, in one statement. The update is
 * conditional on the call being open (`running` or `returned`) and dispatched to this host, so a
 * report that arrives after a terminal cause (deadline, cancellation, loss, an earlier finish)
 * writes nothing: the first terminal cause wins inside the database. An emission that would take
 * the activation past `maxBytes` writes nothing either, and says so (`overBudget`). Reports on
 * calls of different sessions in one batch share the statement (writer/merge.ts).
 */
export function transitionCall(
  ref: CallRef,
  action: CallAction,
  maxBytes = Number.MAX_SAFE_INTEGER,
): WriteOp<TransitionResult> {
  const p = plan(ref.seq, action);
  const input: TransitionInput = {
    sid: ref.sessionId,
    seq: ref.seq,
    host: "hostId" in ref ? ref.hostId : null,
    conn: "connectionId" in ref ? ref.connectionId : null,
    records: p.records,
    ends: p.ends,
    returns: p.returns,
    bytes: emittedBytes(action),
  };
  // Absent rather than null: a JSON null would read as the outcome `null`.
  if (p.outcome !== null) input.outcome = p.outcome;
  const touched = emptyKeys();
  touched.sessions.set(ref.sessionId, action.type === "emit" ? Touch.other : Touch.observation);
  const many = (tx: TransactionSql, all: TransitionInput[], delegated?: boolean) =>
    transitionStatement(tx, all, maxBytes, delegated);
  return {
    notify: touched,
    keys: (result): CommitKeys => (result.seq === null ? emptyKeys() : touched),
    merge: {
      kind: `transition:${maxBytes}`,
      session: uuidKey(ref.sessionId),
      input,
      many: (tx, all, delegated) => many(tx, all as TransitionInput[], delegated),
    },
    run: (tx) => many(tx, [input], isDistributed(tx)).then(([result]) => result!),
    written: (result) => {
      if (result.seq === null) return null;
      const first = result.seq - p.records.length + 1;
      const at = result.writtenAt ?? new Date();
      return {
        sessionId: ref.sessionId,
        records: p.records.map((r, i) =>
          r.kind === "tool_call_ended"
            ? // As the statement writes it (jsonb_build_object('call', …, 'outcome', …)): the call
              // row's outcome as Postgres returned it, keys already in jsonb's order. Every finish
              // is folded by its Agentloop: a copy through JSON there was 3 % of the server's busy
              // time under tool_throughput.
              storedRecord(first + i, r.kind, at, { call: ref.seq, outcome: result.outcome })
            : lazyRecord(first + i, r.kind, at, () => r.payload),
        ),
      };
    },
  };
}

/**
 * The call is open (running or returned), written so that the planner cannot prove a partial
 * index's predicate from it. The partial indexes of open calls (by connection, by deadline) keep
 * an entry for every call that has run since the table was last vacuumed, and a bitmap scan never
 * clears them: with `state IN (...)` the planner read one of them whole, on its estimate of the few
 * calls open, to find the call it could probe by primary key, and each finish cost more than the
 * last until a vacuum (0.3 ms at 6,000 calls; most of the database's time under tool_throughput).
 */
function isOpen(tx: TransactionSql) {
  return tx`CASE c.state WHEN 'running' THEN true WHEN 'returned' THEN true ELSE false END`;
}

/**
 * The transition statement, for one or several reports on calls of distinct sessions. `delegated`:
 * one report, run on the Citus worker holding its session (on-session-shards.ts).
 */
function transitionStatement(
  tx: TransactionSql,
  inputs: TransitionInput[],
  maxBytes: number,
  delegated = false,
): Promise<TransitionResult[]> {
  const query = transitionQuery(tx, inputs, maxBytes);
  const rows = delegated
    ? onSessionShards<TransitionRow>(
        tx,
        inputs[0]!.sid,
        query,
        "op int, seq bigint, outcome jsonb, over_budget boolean, at timestamptz, session_id uuid",
      )
    : query;
  return rows.then((rows) => transitionResults(inputs, rows));
}

function transitionQuery(tx: TransactionSql, inputs: TransitionInput[], maxBytes: number) {
  const brain = tables(tx);
  const json = JSON.stringify(inputs.map((input, op) => ({ op, ...input })));
  return tx<TransitionRow[]>`
    WITH i AS (
      SELECT i.* FROM ${brain.write_inputs}(${json}::text::jsonb) AS e,
        jsonb_to_record(e) AS i(op int, sid uuid, seq bigint, host uuid, conn uuid, records jsonb, ends boolean,
                                returns boolean, outcome jsonb, bytes bigint)
    ),
    open_call AS (
      -- The session row share-locked before the budget is charged, as the foreign key from
      -- activation_budgets did (migration 0014 dropped it): a session deleted meanwhile gets
      -- no orphan budget row, and its deletion waits for this statement to commit.
      -- The call found by its whole key (OFFSET 0 keeps the lookup apart): joined freely, the
      -- planner probed a session's calls by session_id alone and read them all.
      SELECT i.op, i.sid, i.bytes, c.activation_seq FROM i
      CROSS JOIN LATERAL (
        SELECT c.activation_seq, c.host_id, c.connection_id, c.state FROM ${brain.calls} c
        WHERE c.session_id = i.sid AND c.seq = i.seq OFFSET 0
      ) c
      JOIN ${brain.sessions} x ON x.id = i.sid
      WHERE (c.host_id = i.host OR c.connection_id = i.conn) AND ${isOpen(tx)}
      FOR KEY SHARE OF x
    ),
    b AS (
      INSERT INTO ${brain.activation_budgets} AS ab (session_id, activation_seq, emitted_bytes)
      SELECT o.sid, o.activation_seq, o.bytes FROM open_call o
      WHERE o.bytes > 0 AND o.bytes <= ${maxBytes}::bigint
      ON CONFLICT (session_id, activation_seq) DO UPDATE SET emitted_bytes = ab.emitted_bytes + excluded.emitted_bytes
      WHERE ab.emitted_bytes + excluded.emitted_bytes <= ${maxBytes}::bigint
      RETURNING session_id
    ),
    c AS (
      UPDATE ${brain.calls} c SET
        state = CASE WHEN i.ends THEN 'ended' WHEN i.returns THEN 'returned' ELSE c.state END,
        outcome = CASE WHEN i.ends THEN COALESCE(i.outcome, c.outcome, '{"status":"ok"}'::jsonb)
                       ELSE COALESCE(i.outcome, c.outcome) END,
        returned_at = CASE WHEN i.returns THEN clock_timestamp() ELSE c.returned_at END,
        ended_at = CASE WHEN i.ends THEN clock_timestamp() ELSE c.ended_at END
      FROM i
      WHERE c.session_id = i.sid AND c.seq = i.seq
        AND (c.host_id = i.host OR c.connection_id = i.conn)
        AND ${isOpen(tx)}
        AND (i.bytes = 0 OR EXISTS (SELECT 1 FROM b WHERE b.session_id = i.sid))
      RETURNING i.op, i.sid, i.seq, i.records, c.outcome
    ),
    s AS (
      UPDATE ${brain.sessions} x SET last_seq = x.last_seq + jsonb_array_length(c.records)
      FROM c
      WHERE x.id = c.sid
      RETURNING c.op, c.sid, c.seq, c.records, c.outcome, x.last_seq - jsonb_array_length(c.records) AS base
    ),
    r AS (
      INSERT INTO ${brain.records} (session_id, seq, kind, payload)
      SELECT s.sid, s.base + e.ord, e.v->>'kind',
             CASE WHEN e.v->>'kind' = 'tool_call_ended'
                  THEN jsonb_build_object('call', s.seq, 'outcome', s.outcome)
                  ELSE e.v->'payload' END
      FROM s, jsonb_array_elements(s.records) WITH ORDINALITY AS e(v, ord)
      RETURNING session_id, created_at
    )
    -- Each CTE carries forward what the next needs rather than joining back to the input by op:
    -- the planner takes every CTE for one row, and each such join was a nested loop over two
    -- CTEs, quadratic in the writes a statement merges. The answer is one row per fact (a report
    -- written, a report over budget, a record's time), put together by transitionResults.
    SELECT s.op, s.base + jsonb_array_length(s.records) AS seq, s.outcome, false AS over_budget,
           NULL::timestamptz AS at, NULL::uuid AS session_id
    FROM s
    UNION ALL
    SELECT o.op, NULL, NULL, true, NULL, NULL FROM open_call o
    WHERE o.bytes > 0 AND NOT EXISTS (SELECT 1 FROM b WHERE b.session_id = o.sid)
    UNION ALL
    SELECT NULL, NULL, NULL, false, r.created_at, r.session_id FROM r`;
}

type TransitionRow =
  | { op: number; seq: number; outcome: unknown; over_budget: false; at: null; session_id: null }
  | { op: number; seq: null; outcome: null; over_budget: true; at: null; session_id: null }
  | { op: null; seq: null; outcome: null; over_budget: false; at: Date; session_id: string };

/** One result per input, from the statement's rows (see transitionStatement's answer). */
function transitionResults(inputs: TransitionInput[], rows: readonly TransitionRow[]): TransitionResult[] {
  const results = inputs.map(
    (input): TransitionResult => ({ seq: null, ended: input.ends, overBudget: false, bytes: input.bytes }),
  );
  const bySession = new Map(inputs.map((input, k) => [uuidKey(input.sid), results[k]!]));
  for (const row of rows) {
    if (row.session_id !== null) {
      // A report's records share one statement's time; the earliest is when it was written.
      const result = bySession.get(uuidKey(row.session_id))!;
      if (result.writtenAt === undefined || row.at < result.writtenAt) result.writtenAt = row.at;
    } else if (row.over_budget) {
      results[row.op]!.overBudget = true;
    } else {
      const result = results[row.op]!;
      result.seq = row.seq;
      if (inputs[row.op]!.ends) result.outcome = row.outcome;
    }
  }
  return results;
}

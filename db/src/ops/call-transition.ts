import type { CallKey } from "../call-key.js";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import type { WriteOp } from "../writer.js";

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

/**
 * Applies one host report to an open call and journals it, in one statement. The update is
 * conditional on the call being open (`running` or `returned`) and dispatched to this host, so a
 * report that arrives after a terminal cause (deadline, cancellation, loss, an earlier finish)
 * writes nothing: the first terminal cause wins inside the database. An emission that would take
 * the activation past `maxBytes` writes nothing either, and says so (`overBudget`).
 */
export function transitionCall(
  ref: CallRef,
  action: CallAction,
  maxBytes = Number.MAX_SAFE_INTEGER,
): WriteOp<TransitionResult> {
  const p = plan(ref.seq, action);
  const input = JSON.stringify(p.records);
  const n = p.records.length;
  const outcome = p.outcome === null ? null : JSON.stringify(p.outcome);
  const bytes = emittedBytes(action);
  const hostId = "hostId" in ref ? ref.hostId : null;
  const connectionId = "connectionId" in ref ? ref.connectionId : null;
  const touched = emptyKeys();
  touched.sessions.set(ref.sessionId, action.type === "emit" ? Touch.other : Touch.observation);
  return {
    notify: touched,
    keys: (result): CommitKeys => (result.seq === null ? emptyKeys() : touched),
    run: (tx) =>
      tx<{ seq: number | null; over_budget: boolean }[]>`
        WITH open_call AS (
          -- The session row share-locked before the budget is charged, as the foreign key from
          -- activation_budgets did (migration 0014 dropped it): a session deleted meanwhile gets
          -- no orphan budget row, and its deletion waits for this statement to commit.
          SELECT c.activation_seq FROM calls c JOIN sessions x ON x.id = c.session_id
          WHERE c.session_id = ${ref.sessionId} AND c.seq = ${ref.seq}
            AND (c.host_id = ${hostId}::uuid OR c.connection_id = ${connectionId}::uuid)
            AND c.state IN ('running', 'returned')
          FOR KEY SHARE OF x
        ),
        b AS (
          INSERT INTO activation_budgets AS ab (session_id, activation_seq, emitted_bytes)
          SELECT ${ref.sessionId}, activation_seq, ${bytes}::bigint FROM open_call
          WHERE ${bytes}::bigint > 0 AND ${bytes}::bigint <= ${maxBytes}::bigint
          ON CONFLICT (session_id, activation_seq) DO UPDATE SET emitted_bytes = ab.emitted_bytes + excluded.emitted_bytes
          WHERE ab.emitted_bytes + excluded.emitted_bytes <= ${maxBytes}::bigint
          RETURNING 1
        ),
        c AS (
          UPDATE calls SET
            state = CASE WHEN ${p.ends}::boolean THEN 'ended' WHEN ${p.returns}::boolean THEN 'returned' ELSE state END,
            outcome = CASE WHEN ${p.ends}::boolean
                           THEN COALESCE(${outcome}::text::jsonb, outcome, '{"status":"ok"}'::jsonb)
                           ELSE COALESCE(${outcome}::text::jsonb, outcome) END,
            returned_at = CASE WHEN ${p.returns}::boolean THEN clock_timestamp() ELSE returned_at END,
            ended_at = CASE WHEN ${p.ends}::boolean THEN clock_timestamp() ELSE ended_at END
          WHERE session_id = ${ref.sessionId} AND seq = ${ref.seq}
            AND (host_id = ${hostId}::uuid OR connection_id = ${connectionId}::uuid)
            AND state IN ('running', 'returned')
            AND (${bytes}::bigint = 0 OR EXISTS (SELECT 1 FROM b))
          RETURNING outcome
        ),
        input AS (
          SELECT e.ord, e.v->>'kind' AS kind, e.v->'payload' AS payload
          FROM jsonb_array_elements(${input}::text::jsonb) WITH ORDINALITY AS e(v, ord)
        ),
        s AS (
          UPDATE sessions SET last_seq = last_seq + ${n}
          WHERE id = ${ref.sessionId} AND EXISTS (SELECT 1 FROM c)
          RETURNING last_seq - ${n} AS base
        ),
        r AS (
          INSERT INTO records (session_id, seq, kind, payload)
          SELECT ${ref.sessionId}, s.base + i.ord, i.kind,
                 CASE WHEN i.kind = 'tool_call_ended'
                      THEN jsonb_build_object('call', ${ref.seq}::bigint, 'outcome', c.outcome)
                      ELSE i.payload END
          FROM s, input i, c
          RETURNING seq
        )
        SELECT (SELECT max(seq) FROM r) AS seq,
               (EXISTS (SELECT 1 FROM open_call) AND ${bytes}::bigint > 0 AND NOT EXISTS (SELECT 1 FROM b)) AS over_budget`.then(
        ([row]) => ({ seq: row?.seq ?? null, ended: p.ends, overBudget: row?.over_budget ?? false, bytes }),
      ),
  };
}

import { type CommitKeys, emptyKeys, touchOf } from "../commit-keys.js";
import type { WriteOp } from "../writer.js";

/** A tool call row to create with its tool_call_started record. */
export interface NewCall {
  tool: string;
  /**
   * The activation whose budget the call charges; null for a call outside any activation (one an
   * MCP client started), which is its own budget unit: its own seq is written.
   */
  activationSeq: number | null;
  hostId: string | null;
  /** Set when the host is connected to this process: the call is dispatched in the same commit. */
  connectionId: string | null;
  /** "ended" for calls refused before dispatch (unknown tool), with their outcome. */
  state: "pending" | "running" | "ended";
  outcome?: unknown;
  /** Epoch ms, or null for unlimited. */
  deadlineAt: number | null;
  /** Who runs it: an application host (default), a component worker, or nobody (refused). */
  executor?: "host" | "worker" | "none";
  /** Who started it: the session's Agentloop (default) or an MCP client. */
  origin?: "agentloop" | "mcp";
}

export interface NewRecord {
  kind: string;
  payload: unknown;
  call?: NewCall;
}

export interface AppendGuard {
  /** The Agentloop owner's fencing token: a stale owner's append writes nothing. */
  epoch?: number;
  /** Refuse (write nothing) when the session has ended. Defaults to true. */
  requireActive?: boolean;
}

export interface Appended {
  seq: number;
  kind: string;
  createdAt: Date;
}

/** The first seq of an empty result means the guard refused: session missing, ended, or fenced. */
export interface AppendResult {
  records: Appended[];
}

/**
 * A top-level payload field naming another record of the same append, resolved to its sequence
 * when written: `{ message: rel(-1) }` becomes the seq of the record just before.
 */
export function rel(offset: number): { $rel: number } {
  return { $rel: offset };
}

/**
 * Appends records to one session's journal in one statement: bumps `sessions.last_seq` (the row
 * lock keeps seq dense and in commit order), inserts the records, and creates call rows for
 * tool_call_started records.
 */
export function appendRecords(sessionId: string, records: NewRecord[], guard: AppendGuard = {}): WriteOp<AppendResult> {
  const input = JSON.stringify(records.map((r) => ({ kind: r.kind, payload: r.payload, call: r.call ?? null })));
  const n = records.length;
  const hasRelative = input.includes('"$rel"');
  // Only appends that start model calls touch the budget table: other appends stay one statement
  // shorter (they are most of the hot path).
  const countsModelCalls = records.some((r) => r.kind === "model_call_started");
  const epoch = guard.epoch ?? null;
  const requireActive = guard.requireActive ?? true;
  const touched: CommitKeys = emptyKeys();
  let bits = 0;
  for (const r of records) {
    bits |= touchOf(r.kind);
    if (r.call?.hostId && r.call.state === "pending") touched.hosts.add(r.call.hostId);
  }
  touched.sessions.set(sessionId, bits);
  return {
    notify: touched,
    keys: (result) => (result.records.length === 0 ? emptyKeys() : touched),
    run: (tx) =>
      tx<{ seq: number; kind: string; created_at: Date }[]>`
        WITH input AS (
          SELECT e.ord, e.v->>'kind' AS kind, e.v->'payload' AS payload, e.v->'call' AS call
          FROM jsonb_array_elements(${input}::text::jsonb) WITH ORDINALITY AS e(v, ord)
        ),
        s AS (
          UPDATE sessions SET last_seq = last_seq + ${n}
          WHERE id = ${sessionId}
            AND (${epoch}::bigint IS NULL OR owner_epoch = ${epoch}::bigint)
            AND (NOT ${requireActive}::boolean OR status = 'active')
          RETURNING last_seq - ${n} AS base
        ),
        r AS (
          INSERT INTO records (session_id, seq, kind, payload)
          SELECT ${sessionId}, s.base + i.ord, i.kind,
                 CASE WHEN ${hasRelative}::boolean AND jsonb_typeof(i.payload) = 'object' THEN (
                   SELECT jsonb_object_agg(f.key, CASE WHEN jsonb_typeof(f.value) = 'object' AND f.value ? '$rel'
                                                       THEN to_jsonb(s.base + i.ord + (f.value->>'$rel')::bigint)
                                                       ELSE f.value END)
                   FROM jsonb_each(i.payload) AS f)
                 ELSE i.payload END
          FROM s, input i
          RETURNING seq, kind, created_at,
                    CASE WHEN kind = 'model_call_started' THEN (payload->>'activation')::bigint END AS activation
        ),
        ${
          countsModelCalls
            ? // The Agentloop's model calls count against their activation's model-call budget, which
              // its tools' calls share (their conditional charge is in tool-model-calls.ts).
              tx`mb AS (
          INSERT INTO activation_budgets AS ab (session_id, activation_seq, model_calls)
          SELECT ${sessionId}, activation, count(*) FROM r WHERE activation IS NOT NULL GROUP BY activation
          ON CONFLICT (session_id, activation_seq) DO UPDATE SET model_calls = ab.model_calls + excluded.model_calls
        ),`
            : tx``
        }
        c AS (
          INSERT INTO calls (session_id, seq, tool, activation_seq, host_id, connection_id, state, outcome,
                             deadline_at, dispatched_at, ended_at, executor, origin)
          SELECT ${sessionId}, s.base + i.ord, i.call->>'tool',
                 COALESCE((i.call->>'activationSeq')::bigint, s.base + i.ord),
                 (i.call->>'hostId')::uuid, (i.call->>'connectionId')::uuid, i.call->>'state',
                 NULLIF(i.call->'outcome', 'null'::jsonb),
                 to_timestamp((i.call->>'deadlineAt')::double precision / 1000),
                 CASE WHEN i.call->>'state' = 'running' THEN clock_timestamp() END,
                 CASE WHEN i.call->>'state' = 'ended' THEN clock_timestamp() END,
                 COALESCE(i.call->>'executor', 'host'), COALESCE(i.call->>'origin', 'agentloop')
          FROM s, input i WHERE jsonb_typeof(i.call) = 'object'
        )
        SELECT seq, kind, created_at FROM r ORDER BY seq`.then((rows) => ({
        records: rows.map((row) => ({ seq: row.seq, kind: row.kind, createdAt: row.created_at })),
      })),
  };
}

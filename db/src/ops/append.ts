import type { BrainRecordKind, RecordPayload } from "@aexhq/brain-contracts";
import type { TransactionSql } from "postgres";
import { type CommitKeys, emptyKeys, touchOf } from "../commit-keys.js";
import { lazyRecord } from "../jsonb-order.js";
import { isDistributed, tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { onSessionShards } from "./on-session-shards.js";
import { uuidKey } from "./uuid-key.js";

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
  /**
   * "ended" for calls refused before dispatch (unknown tool), with their outcome; "awaiting" for a
   * call at an approval gate, dispatched once approved (approvals.ts).
   */
  state: "awaiting" | "pending" | "running" | "ended";
  outcome?: unknown;
  /** Epoch ms, or null for unlimited. */
  deadlineAt: number | null;
  /** Who runs it: an application host (default), a component worker, or nobody (refused). */
  executor?: "host" | "worker" | "none";
  /** Who started it: the session's Agentloop (default) or an MCP client. */
  origin?: "agentloop" | "mcp";
}

/** A payload as written: any of its top-level sequence fields may be a `rel()` of the same append. */
export type AsWritten<P> = { [F in keyof P]: number extends P[F] ? P[F] | Relative : P[F] };

/**
 * A record to append: one of Brain's own kinds, its payload that kind's schema's type (as
 * written: see AsWritten). Tools' extension events are not appended here but reported on their
 * call (call-transition.ts).
 */
export type NewRecord = {
  [K in BrainRecordKind]: { kind: K; payload: AsWritten<RecordPayload<K>>; call?: NewCall };
}[BrainRecordKind];

/** A record of any kind and payload, as tests and benchmarks write them (appendUnchecked). */
export interface UncheckedRecord {
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
 * when written: `{ message: rel(-1) }` becomes the seq of the record just before. An instance of
 * a class, never a shape: data from outside (a model's tool input, an MCP client's) can look like
 * anything and is never taken for a reference.
 */
export class Relative {
  constructor(readonly offset: number) {}
}

export function rel(offset: number): Relative {
  return new Relative(offset);
}

/**
 * A payload's relative references resolved, as the append statement resolves them: `index` is the
 * record's position in its append, `seqs` the sequences the append was given.
 */
export function resolveRelative(payload: unknown, index: number, seqs: number[]): unknown {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return payload;
  const source = payload as Record<string, unknown>;
  let out: Record<string, unknown> | null = null;
  for (const k in source) {
    const v = source[k];
    if (v instanceof Relative && Object.hasOwn(source, k)) {
      out ??= { ...source };
      out[k] = seqs[index + v.offset];
    }
  }
  return out ?? payload;
}

/** A payload's `rel()` fields as `{ field: offset }`, or null when it has none. */
function relativeOf(payload: unknown): Record<string, number> | null {
  if (!payload || typeof payload !== "object" || Array.isArray(payload)) return null;
  let out: Record<string, number> | null = null;
  const record = payload as Record<string, unknown>;
  for (const k in record) {
    const v = record[k];
    if (v instanceof Relative && Object.hasOwn(record, k)) {
      out ??= {};
      out[k] = v.offset;
    }
  }
  return out;
}

/** A record as the statement reads it: `rel` holds its references, its payload the rest. */
interface RecordInput {
  kind: string;
  payload: unknown;
  call: NewCall | null;
  rel?: Record<string, number>;
}

/** One append's part of the statement's input (see appendStatement). */
interface AppendInput {
  sid: string;
  n: number;
  epoch: number | null;
  active: boolean;
  records: RecordInput[];
}

function recordInput(r: UncheckedRecord): RecordInput {
  const relative = relativeOf(r.payload);
  if (relative === null) return { kind: r.kind, payload: r.payload, call: r.call ?? null };
  const payload: Record<string, unknown> = {};
  const source = r.payload as Record<string, unknown>;
  for (const k in source) if (!Object.hasOwn(relative, k) && Object.hasOwn(source, k)) payload[k] = source[k];
  return { kind: r.kind, payload, call: r.call ?? null, rel: relative };
}

/**
 * Appends records to one session's journal in one statement: bumps `sessions.last_seq` (the row
 * lock keeps seq dense and in commit order), inserts the records, and creates call rows for
 * tool_call_started records. Appends to different sessions in one batch share the statement
 * (writer/merge.ts).
 */
export function appendRecords(sessionId: string, records: NewRecord[], guard: AppendGuard = {}): WriteOp<AppendResult> {
  return appendUnchecked(sessionId, records, guard);
}

/**
 * appendRecords for records no schema holds: a test's or a benchmark's made-up kinds and
 * payloads. Brain's own code appends through appendRecords, typed by kind.
 */
export function appendUnchecked(
  sessionId: string,
  records: readonly UncheckedRecord[],
  guard: AppendGuard = {},
): WriteOp<AppendResult> {
  const input: AppendInput = {
    sid: sessionId,
    n: records.length,
    epoch: guard.epoch ?? null,
    active: guard.requireActive ?? true,
    records: records.map(recordInput),
  };
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
    merge: {
      kind: "append",
      session: uuidKey(sessionId),
      input,
      many: (tx, all, delegated) => appendStatement(tx, all as AppendInput[], delegated),
    },
    run: (tx) => appendStatement(tx, [input], isDistributed(tx)).then(([result]) => result!),
    written: (result) => {
      if (result.records.length === 0) return null;
      const seqs = result.records.map((r) => r.seq);
      return {
        sessionId,
        records: result.records.map((r, i) =>
          lazyRecord(r.seq, r.kind, r.createdAt, () => resolveRelative(records[i]!.payload, i, seqs)),
        ),
      };
    },
  };
}

/**
 * The append statement, for one or several appends to distinct sessions. A session whose guard
 * refuses (missing, ended, fenced) gets no rows, and its append an empty result. `delegated`: one
 * append, run on the Citus worker holding its session (on-session-shards.ts).
 */
function appendStatement(tx: TransactionSql, inputs: AppendInput[], delegated = false): Promise<AppendResult[]> {
  const query = appendQuery(tx, inputs);
  const rows = delegated
    ? onSessionShards<AppendRow>(
        tx,
        inputs[0]!.sid,
        query,
        "session_id uuid, seq bigint, kind text, created_at timestamptz",
      )
    : query;
  return rows.then((rows) => appendResults(inputs, rows));
}

type AppendRow = { session_id: string; seq: number; kind: string; created_at: Date };

function appendQuery(tx: TransactionSql, inputs: AppendInput[]) {
  const brain = tables(tx);
  const json = JSON.stringify(inputs.map((input, op) => ({ op, ...input })));
  // Which variant runs is part of the SQL text, never a parameter: a boolean parameter the plan
  // could fold away made Postgres plan every execution afresh (a custom plan is always cheaper
  // than the generic one), 0.5 ms of planning per append under load.
  const relative = inputs.some((i) => i.records.some((r) => r.rel !== undefined));
  // Only appends that start model calls touch the budget table: other appends stay one statement
  // shorter (they are most of the hot path).
  const countsModelCalls = inputs.some((i) => i.records.some((r) => r.kind === "model_call_started"));
  return tx<AppendRow[]>`
    WITH o AS (
      SELECT o.* FROM ${brain.write_inputs}(${json}::text::jsonb) AS e,
        jsonb_to_record(e) AS o(op int, sid uuid, n int, epoch bigint, active boolean, records jsonb)
    ),
    s AS (
      UPDATE ${brain.sessions} x SET last_seq = x.last_seq + o.n
      FROM o
      WHERE x.id = o.sid
        AND (o.epoch IS NULL OR x.owner_epoch = o.epoch)
        AND (NOT o.active OR x.status = 'active')
      RETURNING x.id AS sid, x.last_seq - o.n AS base, o.records
    ),
    input AS (
      SELECT s.sid, s.base + e.ord AS seq, e.v->>'kind' AS kind, e.v->'payload' AS payload, e.v->'call' AS call,
             e.v->'rel' AS rel
      FROM s, jsonb_array_elements(s.records) WITH ORDINALITY AS e(v, ord)
    ),
    r AS (
      INSERT INTO ${brain.records} (session_id, seq, kind, payload)
      SELECT i.sid, i.seq, i.kind, ${
        relative
          ? tx`CASE WHEN i.rel IS NULL THEN i.payload ELSE i.payload || (
               SELECT jsonb_object_agg(f.key, to_jsonb(i.seq + f.value::bigint)) FROM jsonb_each_text(i.rel) AS f)
             END`
          : tx`i.payload`
      }
      FROM input i
      RETURNING session_id, seq, kind, created_at,
                CASE WHEN kind = 'model_call_started' THEN (payload->>'activation')::bigint END AS activation
    ),
    ${
      countsModelCalls
        ? // The Agentloop's model calls count against their activation's model-call budget, which
          // its tools' calls share (their conditional charge is in tool-model-calls.ts).
          tx`mb AS (
      INSERT INTO ${brain.activation_budgets} AS ab (session_id, activation_seq, model_calls)
      SELECT session_id, activation, count(*) FROM r WHERE activation IS NOT NULL GROUP BY session_id, activation
      ON CONFLICT (session_id, activation_seq) DO UPDATE SET model_calls = ab.model_calls + excluded.model_calls
    ),`
        : tx``
    }
    c AS (
      INSERT INTO ${brain.calls} (session_id, seq, tool, activation_seq, host_id, connection_id, state, outcome,
                         deadline_at, dispatched_at, ended_at, executor, origin)
      SELECT i.sid, i.seq, i.call->>'tool',
             COALESCE((i.call->>'activationSeq')::bigint, i.seq),
             (i.call->>'hostId')::uuid, (i.call->>'connectionId')::uuid, i.call->>'state',
             NULLIF(i.call->'outcome', 'null'::jsonb),
             to_timestamp((i.call->>'deadlineAt')::double precision / 1000),
             CASE WHEN i.call->>'state' = 'running' THEN clock_timestamp() END,
             CASE WHEN i.call->>'state' = 'ended' THEN clock_timestamp() END,
             COALESCE(i.call->>'executor', 'host'), COALESCE(i.call->>'origin', 'agentloop')
      FROM input i WHERE jsonb_typeof(i.call) = 'object'
    )
    SELECT session_id, seq, kind, created_at FROM r`;
}

/**
 * Each input's result found by its session (a statement's sessions are distinct), whatever its
 * spelling: the rows come from the insert, which knows nothing of the inputs' order.
 */
function appendResults(inputs: AppendInput[], rows: readonly AppendRow[]): AppendResult[] {
  const results: AppendResult[] = inputs.map(() => ({ records: [] }));
  const bySession = new Map(inputs.map((input, k) => [uuidKey(input.sid), results[k]!]));
  for (const row of rows) {
    bySession.get(uuidKey(row.session_id))!.records.push({ seq: row.seq, kind: row.kind, createdAt: row.created_at });
  }
  for (const result of results) result.records.sort((a, b) => a.seq - b.seq);
  return results;
}

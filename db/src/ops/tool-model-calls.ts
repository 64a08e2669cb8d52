import type { Sql } from "postgres";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import type { CallRef } from "./call-transition.js";

/**
 * Model calls made on behalf of tool calls (ctx.model, the WIT `model` import). Each is journaled
 * as model_call_started before the provider is asked and model_call_ended after, with the tool call
 * as its origin. In between, `tool_model_calls` names the process making the request, so that when
 * that process dies the call is recorded `unknown` by whoever notices, and is never replayed.
 */

export interface StartedToolModelCall {
  /** The model_call_started record; null when refused (see `open`, `overBudget`). */
  seq: number | null;
  /** Whether the tool call was open (running or returned) for this requester. */
  open: boolean;
  /** The call was open but the activation's model-call budget is spent. */
  overBudget: boolean;
  activation: number | null;
  /** The tool call's deadline, epoch ms, or null. */
  deadline: number | null;
  /** Earlier tool model calls of the session (the scripted provider's position). */
  index: number;
}

const notified = (sessionId: string): CommitKeys => {
  const keys = emptyKeys();
  keys.sessions.set(sessionId, Touch.other);
  return keys;
};

/**
 * Charges the activation's model-call budget and journals model_call_started, in one statement,
 * only while the tool call is open and the budget has room. `payload` gets the activation added.
 */
export function startToolModelCall(
  ref: CallRef,
  payload: Record<string, unknown>,
  runnerId: string,
  maxModelCalls: number,
  /** Count the session's earlier tool model calls (only the scripted provider needs it). */
  countPrior = false,
): WriteOp<StartedToolModelCall> {
  const hostId = "hostId" in ref ? ref.hostId : null;
  const connectionId = "connectionId" in ref ? ref.connectionId : null;
  const touched = notified(ref.sessionId);
  return {
    notify: touched,
    keys: (r) => (r.seq === null ? emptyKeys() : touched),
    run: (tx) => {
      const brain = tables(tx);
      return tx<
        {
          seq: number | null;
          open: boolean;
          activation: number | null;
          deadline: number | null;
          index: number;
        }[]
      >`
        WITH open_call AS (
          -- The session row share-locked before the budget is charged, as the foreign key from
          -- activation_budgets did (migration 0014 dropped it): no orphan for a deleted session.
          SELECT c.activation_seq, c.deadline_at FROM ${brain.calls} c JOIN ${brain.sessions} x ON x.id = c.session_id
          WHERE c.session_id = ${ref.sessionId} AND c.seq = ${ref.seq}
            AND (c.host_id = ${hostId}::uuid OR c.connection_id = ${connectionId}::uuid)
            AND c.state IN ('running', 'returned')
          FOR KEY SHARE OF x
        ),
        b AS (
          INSERT INTO ${brain.activation_budgets} AS ab (session_id, activation_seq, model_calls)
          SELECT ${ref.sessionId}, activation_seq, 1 FROM open_call WHERE ${maxModelCalls}::int >= 1
          ON CONFLICT (session_id, activation_seq) DO UPDATE SET model_calls = ab.model_calls + 1
          WHERE ab.model_calls < ${maxModelCalls}::int
          RETURNING activation_seq
        ),
        s AS (
          UPDATE ${brain.sessions} SET last_seq = last_seq + 1
          WHERE id = ${ref.sessionId} AND status = 'active' AND EXISTS (SELECT 1 FROM b)
          RETURNING last_seq AS seq
        ),
        r AS (
          INSERT INTO ${brain.records} (session_id, seq, kind, payload)
          SELECT ${ref.sessionId}, s.seq, 'model_call_started',
                 ${JSON.stringify(payload)}::text::jsonb || jsonb_build_object('activation', b.activation_seq)
          FROM s, b
          RETURNING seq
        ),
        t AS (
          INSERT INTO ${brain.tool_model_calls} (session_id, seq, call_seq, runner_id)
          SELECT ${ref.sessionId}, seq, ${ref.seq}, ${runnerId}::uuid FROM r
        )
        SELECT (SELECT seq FROM r) AS seq,
               EXISTS (SELECT 1 FROM open_call) AS open,
               (SELECT activation_seq FROM open_call) AS activation,
               (SELECT (extract(epoch FROM deadline_at) * 1000)::float8 FROM open_call) AS deadline,
               -- The record r wrote left out by name: one Postgres never shows it to this
               -- statement, a Citus cluster (which runs each CTE as a step of its own) does.
               CASE WHEN ${countPrior}::boolean THEN
                 (SELECT count(*)::int FROM ${brain.records}
                   WHERE session_id = ${ref.sessionId} AND kind = 'model_call_started'
                     AND payload->'origin'->>'type' = 'tool' AND seq IS DISTINCT FROM (SELECT seq FROM r))
               ELSE 0 END AS index`.then(([row]) => ({
        seq: row?.seq ?? null,
        open: row?.open ?? false,
        overBudget: (row?.open ?? false) && row?.seq === null,
        activation: row?.activation ?? null,
        deadline: row?.deadline ?? null,
        index: row?.index ?? 0,
      }));
    },
  };
}

/**
 * Journals model_call_ended for one tool model call still in flight; writes nothing (null) when
 * someone else already recorded its end (a recovery sweep that thought its runner dead).
 */
export function endToolModelCall(sessionId: string, seq: number, payload: unknown): WriteOp<number | null> {
  const touched = notified(sessionId);
  return {
    notify: touched,
    keys: (r) => (r === null ? emptyKeys() : touched),
    run: (tx) => {
      const brain = tables(tx);
      return tx<{ seq: number | null }[]>`
        WITH t AS (
          DELETE FROM ${brain.tool_model_calls} WHERE session_id = ${sessionId} AND seq = ${seq} RETURNING seq
        ),
        s AS (
          UPDATE ${brain.sessions} SET last_seq = last_seq + 1
          WHERE id = ${sessionId} AND EXISTS (SELECT 1 FROM t)
          RETURNING last_seq AS seq
        ),
        r AS (
          INSERT INTO ${brain.records} (session_id, seq, kind, payload)
          SELECT ${sessionId}, s.seq, 'model_call_ended', ${JSON.stringify(payload)}::text::jsonb FROM s
          RETURNING seq
        )
        SELECT (SELECT seq FROM r) AS seq`.then(([row]) => row?.seq ?? null);
    },
  };
}

/**
 * Recovery: tool model calls whose runner is gone (declared dead or stopped without recording
 * them) end `unknown`; nobody can say whether the provider answered, and they are never replayed.
 */
export function endOrphanedToolModelCalls(): WriteOp<number> {
  let sessions: string[] = [];
  return {
    keys: () => {
      const keys = emptyKeys();
      for (const id of sessions) keys.sessions.set(id, Touch.other);
      return keys;
    },
    run: (tx) => {
      const brain = tables(tx);
      return tx<{ session_id: string }[]>`
        WITH t AS (
          DELETE FROM ${brain.tool_model_calls} m
          WHERE NOT EXISTS (SELECT 1 FROM ${brain.servers} v WHERE v.id = m.runner_id AND v.stopped_at IS NULL)
          RETURNING session_id, seq, call_seq
        ),
        per AS (
          SELECT session_id, array_agg(seq ORDER BY seq) AS seqs, array_agg(call_seq ORDER BY seq) AS calls, count(*) AS n
          FROM t GROUP BY session_id
        ),
        s AS (
          UPDATE ${brain.sessions} x SET last_seq = x.last_seq + per.n
          FROM per WHERE x.id = per.session_id
          RETURNING x.id, x.last_seq - per.n AS base, per.seqs, per.calls
        ),
        r AS (
          INSERT INTO ${brain.records} (session_id, seq, kind, payload)
          SELECT s.id, s.base + u.ord, 'model_call_ended',
                 jsonb_build_object('call', u.seq, 'origin', jsonb_build_object('type', 'tool', 'sessionId', s.id, 'sequence', u.call_seq),
                                    'outcome', '{"status":"unknown","cause":"runner_lost"}'::jsonb)
          FROM s, unnest(s.seqs, s.calls) WITH ORDINALITY AS u(seq, call_seq, ord)
          RETURNING session_id
        )
        SELECT session_id FROM r`.then((rows) => {
        sessions = [...new Set(rows.map((row) => row.session_id))];
        return rows.length;
      });
    },
  };
}

/**
 * Whether a call's tool is bound to an HTTP Environment that grants `model`: only such a call may
 * use the model route (tools served over HTTP get no model calls).
 */
export async function modelGranted(sql: Sql, sessionId: string, seq: number): Promise<boolean> {
  const brain = tables(sql);
  const [row] = await sql<{ granted: boolean }[]>`
    SELECT COALESCE((e.config->'grants'->>'model')::boolean, false) AS granted
    FROM ${brain.calls} c
    JOIN ${brain.sessions} s ON s.id = c.session_id
    CROSS JOIN LATERAL jsonb_array_elements(s.tools) AS t
    JOIN ${brain.environments} e ON e.session_id = c.session_id AND e.name = t->'env'->>'name'
    WHERE c.session_id = ${sessionId} AND c.seq = ${seq}
      AND t->>'name' = c.tool AND t->'env'->>'type' = 'http'`;
  return row?.granted ?? false;
}

import type { CallKey } from "../call-key.js";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";

/** Which open calls to end. */
export type EndCallsFilter =
  | { connectionId: string }
  | { sessionId: string; seqs?: number[] }
  | { serverId: string }
  | { deadlineBefore: Date };

export interface EndedCall extends CallKey {
  hostId: string | null;
  connectionId: string | null;
  endSeq: number;
}

/**
 * Ends open calls with a Brain-made outcome (timeout, cancelled, unknown) and journals a
 * tool_call_ended for each, all in one statement. Calls already ended are untouched: the first
 * terminal cause wins.
 */
export function endCalls(filter: EndCallsFilter, outcome: { status: string; cause?: string }): WriteOp<EndedCall[]> {
  const o = JSON.stringify(outcome);
  const byConnection = "connectionId" in filter ? filter.connectionId : null;
  const bySession = "sessionId" in filter ? filter.sessionId : null;
  const seqs = "seqs" in filter && filter.seqs ? filter.seqs : null;
  const byServer = "serverId" in filter ? filter.serverId : null;
  const before = "deadlineBefore" in filter ? filter.deadlineBefore : null;
  return {
    keys: (ended): CommitKeys => {
      const keys = emptyKeys();
      for (const c of ended) {
        keys.sessions.set(c.sessionId, Touch.observation);
        // The process holding the call's connection tells the host (cancel frame).
        if (c.hostId && c.connectionId) keys.hosts.add(c.hostId);
      }
      return keys;
    },
    run: (tx) => {
      const brain = tables(tx);
      const seqArray = seqs ? tx.array(seqs) : null;
      return tx<
        { session_id: string; seq: number; host_id: string | null; connection_id: string | null; end_seq: number }[]
      >`
        WITH c AS (
          UPDATE ${brain.calls} SET state = 'ended', outcome = ${o}::text::jsonb, ended_at = statement_timestamp()
          WHERE state <> 'ended'
            AND (${byConnection}::uuid IS NULL OR connection_id = ${byConnection}::uuid)
            AND (${bySession}::uuid IS NULL OR session_id = ${bySession}::uuid)
            AND (${seqArray}::bigint[] IS NULL OR seq = ANY(${seqArray}::bigint[]))
            AND (${byServer}::uuid IS NULL OR connection_id IN (
                  SELECT id FROM ${brain.host_connections} WHERE server_id = ${byServer}::uuid))
            AND (${before}::timestamptz IS NULL OR deadline_at <= ${before}::timestamptz)
          RETURNING session_id, seq, host_id, connection_id
        ),
        per AS (
          SELECT session_id, array_agg(seq ORDER BY seq) AS seqs, count(*)::bigint AS n FROM c GROUP BY session_id
        ),
        s AS (
          UPDATE ${brain.sessions} SET last_seq = sessions.last_seq + per.n FROM per
          WHERE sessions.id = per.session_id
          RETURNING sessions.id, sessions.last_seq - per.n AS base, per.seqs
        ),
        r AS (
          INSERT INTO ${brain.records} (session_id, seq, kind, payload)
          SELECT s.id, s.base + u.ord, 'tool_call_ended', jsonb_build_object('call', u.seq, 'outcome', ${o}::text::jsonb)
          FROM s, unnest(s.seqs) WITH ORDINALITY AS u(seq, ord)
          RETURNING session_id, seq, (payload->>'call')::bigint AS call
        )
        SELECT c.session_id, c.seq, c.host_id, c.connection_id, r.seq AS end_seq
        FROM c JOIN r ON r.session_id = c.session_id AND r.call = c.seq
        ORDER BY c.session_id, c.seq`.then((rows) =>
        rows.map((r) => ({
          sessionId: r.session_id,
          seq: r.seq,
          hostId: r.host_id,
          connectionId: r.connection_id,
          endSeq: r.end_seq,
        })),
      );
    },
  };
}

/** The outcome of a call whose deadline passed, whoever notices first. */
const DEADLINE_OUTCOME = { status: "timeout", cause: "deadline" } as const;

/**
 * Ends one call at its deadline: the session actor's timer and a worker job that finds its call
 * overdue write the same record as the durable backstop (endOverdueCalls), and the first one wins.
 */
export function timeOutCall(sessionId: string, seq: number): WriteOp<EndedCall[]> {
  return endCalls({ sessionId, seqs: [seq] }, DEADLINE_OUTCOME);
}

/** Ends every open call whose deadline has passed (the backstop job, and after an outage). */
export function endOverdueCalls(): WriteOp<EndedCall[]> {
  return endCalls({ deadlineBefore: new Date() }, DEADLINE_OUTCOME);
}

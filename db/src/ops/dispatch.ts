import type { CallKey } from "../call-key.js";
import { emptyKeys } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";

export interface DispatchedCall extends CallKey {
  tool: string;
  input: unknown;
  /** Epoch ms, or null for unlimited. */
  deadline: number | null;
  /** A person approved the call at its gate: the host runs it without asking a predicate. */
  approved?: true;
}

/** A claimed row as the invoke frame carries it. */
export function dispatchedCall(r: {
  session_id: string;
  seq: number;
  tool: string;
  input: unknown;
  deadline: number | null;
  approved: boolean;
}): DispatchedCall {
  const call: DispatchedCall = {
    sessionId: r.session_id,
    seq: r.seq,
    tool: r.tool,
    input: r.input,
    deadline: r.deadline,
  };
  if (r.approved) call.approved = true;
  return call;
}

/**
 * Claims a host's pending calls for one of its connections. The claim (state running, the
 * connection id) commits before any frame is sent, so a call is sent at most once: a crash after
 * this commit leaves the call on a connection that is gone, and it ends `unknown`.
 */
export function claimPendingCalls(
  hostId: string,
  connectionId: string,
  sessionIds: readonly string[] | null = null,
): WriteOp<DispatchedCall[]> {
  return {
    notify: emptyKeys(),
    keys: emptyKeys,
    run: (tx) => {
      const brain = tables(tx);
      // Null: every session of the host (a connection that does not say which it serves).
      const only = sessionIds === null ? null : tx.array([...sessionIds]);
      return tx<Parameters<typeof dispatchedCall>[0][]>`
        WITH c AS (
          UPDATE ${brain.calls} SET state = 'running', connection_id = ${connectionId}, dispatched_at = statement_timestamp()
          WHERE host_id = ${hostId} AND state = 'pending' AND executor = 'host'
            AND (${only}::uuid[] IS NULL OR session_id = ANY(${only}::uuid[]))
          RETURNING session_id, seq, tool, deadline_at, approved_input
        )
        SELECT c.session_id, c.seq, c.tool, COALESCE(c.approved_input, r.payload->'input') AS input,
               c.approved_input IS NOT NULL AS approved,
               (extract(epoch FROM c.deadline_at) * 1000)::float8 AS deadline
        FROM c JOIN ${brain.records} r ON r.session_id = c.session_id AND r.seq = c.seq
        ORDER BY c.session_id, c.seq`.then((rows) => rows.map(dispatchedCall));
    },
  };
}

export interface ClaimedWorkerCall extends CallKey {
  tool: string;
  input: unknown;
  /** Epoch ms, or null for unlimited. */
  deadline: number | null;
  /** The tool's placement as advertised at session creation (implementation, options, env). */
  placement: unknown;
  /** Set when an earlier worker left the call resumable (an MCP task it started); see resume-calls.ts. */
  resume: unknown;
}

/**
 * A worker claims one component call for its connection before running it. Only a pending call
 * can be claimed, so a job delivered twice runs the component at most once.
 */
export function claimWorkerCall(
  sessionId: string,
  seq: number,
  connectionId: string,
): WriteOp<ClaimedWorkerCall | null> {
  return {
    notify: emptyKeys(),
    keys: emptyKeys,
    run: (tx) => {
      const brain = tables(tx);
      return tx<{ tool: string; input: unknown; deadline: number | null; placement: unknown; resume: unknown }[]>`
        WITH c AS (
          UPDATE ${brain.calls} SET state = 'running', connection_id = ${connectionId}, dispatched_at = statement_timestamp()
          WHERE session_id = ${sessionId} AND seq = ${seq} AND state = 'pending' AND executor = 'worker'
          RETURNING tool, deadline_at, resume, approved_input
        )
        SELECT c.tool, COALESCE(c.approved_input, r.payload->'input') AS input, c.resume,
               (extract(epoch FROM c.deadline_at) * 1000)::float8 AS deadline,
               (SELECT t FROM ${brain.sessions} s, jsonb_array_elements(s.tools) AS t
                 WHERE s.id = ${sessionId} AND t->>'name' = c.tool) AS placement
        FROM c JOIN ${brain.records} r ON r.session_id = ${sessionId} AND r.seq = ${seq}`.then(([row]) =>
        row
          ? {
              sessionId,
              seq,
              tool: row.tool,
              input: row.input,
              deadline: row.deadline,
              placement: row.placement,
              resume: row.resume ?? null,
            }
          : null,
      );
    },
  };
}

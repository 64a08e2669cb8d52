import type { PgBoss } from "pg-boss";
import { enqueueWorkerJob } from "../boss.js";
import { emptyKeys } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { type ConnectionCallRef, type TransitionResult, transitionCall } from "./call-transition.js";

/** The record kind a resume point is journaled under (Brain's own: `brain.` kinds are reserved). */
export const MCP_TASK_KIND = "brain.mcp_task";

/**
 * Journals that a worker's call can be picked up by another worker, and how (`resume`: an MCP
 * task's id and session), in one transaction: a `brain.mcp_task` record and `calls.resume`, both
 * only while the call is open on this connection. The record is Brain's own, so the activation's
 * budget never refuses it.
 */
export function recordResumePoint(call: ConnectionCallRef, resume: unknown): WriteOp<TransitionResult> {
  const journal = transitionCall(call, { type: "emit", kind: MCP_TASK_KIND, data: resume as never });
  const text = JSON.stringify(resume);
  return {
    keys: journal.keys,
    run: async (tx) => {
      const brain = tables(tx);
      const result = await journal.run(tx);
      if (result.seq !== null) {
        await tx`UPDATE ${brain.calls} SET resume = ${text}::text::jsonb
                 WHERE session_id = ${call.sessionId} AND seq = ${call.seq} AND state IN ('running', 'returned')`;
      }
      return result;
    },
    exclusive: true,
  };
}

/** Whose lost calls to release: a dead process's (by its server id) or one worker connection's. */
export type ReleaseFilter = { serverId: string } | { connectionId: string };

/**
 * A worker is gone (declared dead, or stopping): its open calls that recorded a resume point are
 * not ended `unknown` but set pending again, off its connection, each with a new job committed in
 * the same transaction, so the next worker to claim one resumes it (polls the same MCP task).
 * Run before ending the rest of the process's calls. The claim stays at most once: only a pending
 * call can be claimed, and the resumed worker never sends the call again, it only polls.
 */
export function releaseResumableCalls(
  boss: PgBoss,
  filter: ReleaseFilter,
): WriteOp<{ sessionId: string; seq: number }[]> {
  const byServer = "serverId" in filter ? filter.serverId : null;
  const byConnection = "connectionId" in filter ? filter.connectionId : null;
  return {
    keys: () => emptyKeys(),
    exclusive: true,
    run: async (tx) => {
      const brain = tables(tx);
      const rows = await tx<{ session_id: string; seq: number; token_id: string | null }[]>`
        UPDATE ${brain.calls} SET state = 'pending', connection_id = NULL, requeued_at = now()
        WHERE state = 'running' AND executor = 'worker' AND resume IS NOT NULL
          AND (${byConnection}::uuid IS NULL OR connection_id = ${byConnection}::uuid)
          AND (${byServer}::uuid IS NULL OR connection_id IN (
                SELECT id FROM ${brain.host_connections} WHERE server_id = ${byServer}::uuid))
        RETURNING session_id, seq, (SELECT s.token_id FROM ${brain.sessions} s WHERE s.id = calls.session_id) AS token_id`;
      for (const r of rows) {
        await enqueueWorkerJob(boss, tx, { sessionId: r.session_id, seq: Number(r.seq) }, r.token_id);
      }
      return rows.map((r) => ({ sessionId: r.session_id, seq: Number(r.seq) }));
    },
  };
}

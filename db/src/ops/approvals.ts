import { BrainError, errorOutcome, type PendingApproval, type RecordPayload } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import type { CallKey } from "../call-key.js";
import { type CommitKeys, emptyKeys, mergeKeys, Touch } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { appendRecords } from "./append.js";
import type { CallRef } from "./call-transition.js";
import { endCalls } from "./end-calls.js";

/**
 * The session's calls waiting for a decision, in call order: what the `approvals` view (migration
 * 0022) shows of one session, with every table read by the session's id, so that on a Citus
 * cluster the statement goes to one worker (through the view, the lateral read fans out).
 */
export async function listApprovals(sql: Sql, sessionId: string): Promise<PendingApproval[]> {
  const brain = tables(sql);
  const rows = await sql<
    {
      call: number;
      tool: string;
      call_id: string;
      input: PendingApproval["input"];
      input_hash: string;
      deadline: number | null;
      requested_at: Date;
    }[]
  >`
    SELECT c.seq AS call, c.tool, r.payload->>'callId' AS call_id, r.payload->'input' AS input,
           COALESCE(r.payload->'approval'->>'inputHash', k.input_hash) AS input_hash,
           COALESCE(k.created_at, c.started_at) AS requested_at,
           (extract(epoch FROM c.deadline_at) * 1000)::float8 AS deadline
    FROM ${brain.calls} c
    JOIN ${brain.records} r ON r.session_id = ${sessionId} AND r.seq = c.seq
    LEFT JOIN LATERAL (
      SELECT a.payload->>'inputHash' AS input_hash, a.created_at FROM ${brain.records} a
      WHERE a.session_id = ${sessionId} AND a.seq > c.seq AND a.kind = 'approval_checked'
        AND a.payload->>'call' = c.seq::text
      ORDER BY a.seq DESC LIMIT 1
    ) k ON r.payload->'approval' IS NULL
    WHERE c.session_id = ${sessionId} AND c.state = 'awaiting' ORDER BY c.seq`;
  return rows.map((r) => ({
    call: Number(r.call),
    tool: r.tool,
    callId: r.call_id,
    input: r.input,
    inputHash: r.input_hash,
    deadline: r.deadline,
    requestedAt: r.requested_at.toISOString(),
  }));
}

export interface Decision {
  /** Who decided: "operator", or the application token's id. */
  by: string;
  /** Approved with this input instead of the model's (already checked against the tool's schema). */
  input?: unknown;
  reason?: string;
}

/** Locks the waiting call, or refuses with call_not_waiting: decided already, ended, or no such call. */
async function lockWaiting(tx: TransactionSql, sessionId: string, seq: number): Promise<void> {
  const brain = tables(tx);
  const [row] = await tx`
    SELECT 1 FROM ${brain.calls}
    WHERE session_id = ${sessionId} AND seq = ${seq} AND state = 'awaiting' FOR UPDATE`;
  if (!row) throw new BrainError("call_not_waiting");
}

function decided(seq: number, decision: "approved" | "denied", d: Decision): RecordPayload<"approval_decided"> {
  return {
    call: seq,
    decision,
    by: d.by,
    ...(d.input !== undefined ? { input: d.input } : {}),
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
  };
}

/** Commits a worker's job for a call inside the transaction that makes it pending (enqueueWorkerJob). */
export type EnqueueJob = (tx: TransactionSql, call: CallKey, owner: string | null) => Promise<void>;

/**
 * Approves a waiting call: approval_decided is journaled and the call becomes pending with the
 * input it runs with (the edited one, or the model's: set either way, it marks the call approved,
 * so its host runs it without asking a predicate again), in one transaction; its host's servers
 * are told (the commit's host key) and whichever holds a connection serving the session claims
 * and sends it, once. A call Brain runs itself gets its worker job in that transaction.
 */
export function approveCall(
  sessionId: string,
  seq: number,
  d: Decision,
  enqueueJob: EnqueueJob,
): WriteOp<{ sequence: number; hostId: string | null }> {
  return {
    exclusive: true,
    keys: (r): CommitKeys => {
      const keys = emptyKeys();
      keys.sessions.set(sessionId, Touch.other);
      if (r.hostId) keys.hosts.add(r.hostId);
      return keys;
    },
    run: async (tx) => {
      const brain = tables(tx);
      const input = d.input === undefined ? null : JSON.stringify(d.input);
      // The state test is the decision's guard: one UPDATE both checks and takes the call.
      const [row] = await tx<{ host_id: string | null; executor: string; token_id: string | null }[]>`
        WITH c AS (
          UPDATE ${brain.calls} c SET state = 'pending',
            approved_input = COALESCE(${input}::text::jsonb, r.payload->'input')
          FROM ${brain.records} r
          WHERE c.session_id = ${sessionId} AND c.seq = ${seq} AND c.state = 'awaiting'
            AND r.session_id = ${sessionId} AND r.seq = c.seq
          RETURNING c.host_id, c.executor
        )
        SELECT c.host_id, c.executor, (SELECT s.token_id FROM ${brain.sessions} s WHERE s.id = ${sessionId}) AS token_id
        FROM c`;
      if (!row) throw new BrainError("call_not_waiting");
      // A tool Brain runs itself: its worker job commits with the approval, as with a call's start.
      if (row.executor === "worker") await enqueueJob(tx, { sessionId, seq }, row.token_id);
      const appended = await appendRecords(sessionId, [
        { kind: "approval_decided", payload: decided(seq, "approved", d) },
      ]).run(tx);
      return { sequence: appended.records[0]!.seq, hostId: row.host_id };
    },
  };
}

/** Denies a waiting call: approval_decided, then the call ends with a `denied` error the model reads. */
export function denyCall(sessionId: string, seq: number, d: Decision): WriteOp<{ sequence: number }> {
  const message = d.reason ? `Denied: ${d.reason}` : "A person denied this call.";
  const end = endCalls({ sessionId, seqs: [seq] }, errorOutcome("denied", message));
  let endKeys = emptyKeys();
  return {
    exclusive: true,
    keys: () => {
      const keys = emptyKeys();
      keys.sessions.set(sessionId, Touch.observation);
      mergeKeys(keys, endKeys);
      return keys;
    },
    run: async (tx) => {
      await lockWaiting(tx, sessionId, seq);
      const appended = await appendRecords(sessionId, [
        { kind: "approval_decided", payload: decided(seq, "denied", d) },
      ]).run(tx);
      endKeys = end.keys(await end.run(tx));
      return { sequence: appended.records[0]!.seq };
    },
  };
}

/**
 * Journals the answer of a tool's approval predicate, which the host asked before running the
 * call: approval_checked. When a person must decide (`required`), the call leaves its connection
 * and waits (`awaiting`) with its input's hash, as a call of an `always` gate does; its deadline
 * keeps running. Only a call running on `ref`'s host (or connection) and not yet approved is
 * checked: `null` otherwise, and nothing is written.
 */
export function checkApproval(
  ref: CallRef,
  required: boolean,
  hash: (input: unknown) => string,
): WriteOp<{ sequence: number } | null> {
  const host = "hostId" in ref ? ref.hostId : null;
  const conn = "connectionId" in ref ? ref.connectionId : null;
  return {
    keys: (r): CommitKeys => {
      const keys = emptyKeys();
      if (r) keys.sessions.set(ref.sessionId, Touch.other);
      return keys;
    },
    run: async (tx) => {
      const brain = tables(tx);
      const [row] = await tx<{ input: unknown }[]>`
        UPDATE ${brain.calls} c
        SET state = CASE WHEN ${required} THEN 'awaiting' ELSE c.state END,
            connection_id = CASE WHEN ${required} THEN NULL ELSE c.connection_id END
        FROM ${brain.records} r
        WHERE c.session_id = ${ref.sessionId} AND c.seq = ${ref.seq} AND c.state = 'running'
          AND c.approved_input IS NULL AND (c.host_id = ${host} OR c.connection_id = ${conn})
          AND r.session_id = c.session_id AND r.seq = c.seq
        RETURNING r.payload->'input' AS input`;
      if (!row) return null;
      const payload: RecordPayload<"approval_checked"> = required
        ? { call: ref.seq, required, inputHash: hash(row.input) }
        : { call: ref.seq, required };
      const appended = await appendRecords(ref.sessionId, [{ kind: "approval_checked", payload }]).run(tx);
      return { sequence: appended.records[0]!.seq };
    },
  };
}

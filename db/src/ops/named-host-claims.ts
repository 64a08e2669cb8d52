import type { TransactionSql } from "postgres";
import { emptyKeys } from "../commit-keys.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { type DispatchedCall, dispatchedCall } from "./dispatch.js";
import { type Judgement, liveServer, NO_JUDGEMENT } from "./ownership.js";

type ClaimRow = Parameters<typeof dispatchedCall>[0];

export interface NamedClaimOptions {
  judge?: Judgement;
  /**
   * The tables are distributed on a Citus cluster, which will not lock rows of many shards in
   * one statement: the share is counted and the oldest calls picked by plain reads, then each
   * picked call is claimed by a statement of its own that takes it only if it is still pending.
   */
  citus?: boolean;
}

/**
 * Claims pending calls of a named host for one of its replica connections: at most its fair share
 * (the host's open and pending calls over its live replicas, rounded up, less what it already
 * runs), oldest first. Every server holding a replica is told of new pending calls and claims for
 * its own connections, so the calls spread over the replicas, least loaded first; the claim
 * commits before any frame is sent (at most once), and the host lock keeps two claims from both
 * counting the same free share.
 */
export function claimNamedCalls(
  hostId: string,
  connectionId: string,
  options: NamedClaimOptions = {},
): WriteOp<DispatchedCall[]> {
  const judge = options.judge ?? NO_JUDGEMENT;
  return {
    exclusive: true,
    keys: emptyKeys,
    run: async (tx) => {
      const brain = tables(tx);
      await tx`SELECT 1 FROM ${brain.hosts} WHERE id = ${hostId} FOR UPDATE`;
      const claim = options.citus ? claimApart : claimTogether;
      return (await claim(tx, hostId, connectionId, judge)).map(dispatchedCall);
    },
  };
}

/** The live replica connections of the host, as a CTE's body. */
function live(tx: TransactionSql, hostId: string, judge: Judgement) {
  const brain = tables(tx);
  return tx`
    SELECT hc.id FROM ${brain.host_connections} hc JOIN ${brain.servers} v ON v.id = hc.server_id
    WHERE hc.host_id = ${hostId} AND hc.closed_at IS NULL AND hc.replica_id IS NOT NULL AND ${liveServer(tx, judge)}`;
}

/** On one Postgres: the share counted, the calls picked (SKIP LOCKED) and claimed, one statement. */
function claimTogether(tx: TransactionSql, hostId: string, connectionId: string, judge: Judgement) {
  const brain = tables(tx);
  return tx<ClaimRow[]>`
    WITH live AS (${live(tx, hostId, judge)}),
    load AS (
      SELECT count(*) FILTER (WHERE connection_id = ${connectionId}) AS mine, count(*) AS total
      FROM ${brain.calls} WHERE connection_id IN (SELECT id FROM live) AND state IN ('running', 'returned')
    ),
    waiting AS (
      SELECT count(*) AS n FROM ${brain.calls} WHERE host_id = ${hostId} AND state = 'pending' AND executor = 'host'
    ),
    quota AS (
      SELECT CASE WHEN EXISTS (SELECT 1 FROM live WHERE id = ${connectionId})
             THEN GREATEST(0, ceil((load.total + waiting.n)::numeric / (SELECT count(*) FROM live)) - load.mine)
             ELSE 0 END::bigint AS n
      FROM load, waiting
    ),
    pick AS (
      SELECT session_id, seq FROM ${brain.calls}
      WHERE host_id = ${hostId} AND state = 'pending' AND executor = 'host'
      ORDER BY started_at, session_id, seq
      LIMIT (SELECT n FROM quota)
      FOR UPDATE SKIP LOCKED
    ),
    c AS (
      UPDATE ${brain.calls} SET state = 'running', connection_id = ${connectionId}, dispatched_at = statement_timestamp()
      FROM pick WHERE calls.session_id = pick.session_id AND calls.seq = pick.seq
      RETURNING calls.session_id, calls.seq, calls.tool, calls.deadline_at, calls.approved_input
    )
    SELECT c.session_id, c.seq, c.tool, COALESCE(c.approved_input, r.payload->'input') AS input,
           c.approved_input IS NOT NULL AS approved,
           (extract(epoch FROM c.deadline_at) * 1000)::float8 AS deadline
    FROM c JOIN ${brain.records} r ON r.session_id = c.session_id AND r.seq = c.seq
    ORDER BY c.session_id, c.seq`;
}

/** On a Citus cluster: the same share, counted and picked by reads, each call claimed apart. */
async function claimApart(
  tx: TransactionSql,
  hostId: string,
  connectionId: string,
  judge: Judgement,
): Promise<ClaimRow[]> {
  const brain = tables(tx);
  const ids = (await tx<{ id: string }[]>`${live(tx, hostId, judge)}`).map((r) => r.id);
  if (!ids.includes(connectionId)) return [];
  const [load] = await tx<{ mine: number; total: number; waiting: number }[]>`
    SELECT (SELECT count(*)::int FROM ${brain.calls}
             WHERE connection_id = ${connectionId} AND state IN ('running', 'returned')) AS mine,
           (SELECT count(*)::int FROM ${brain.calls}
             WHERE connection_id = ANY(${ids}::uuid[]) AND state IN ('running', 'returned')) AS total,
           (SELECT count(*)::int FROM ${brain.calls}
             WHERE host_id = ${hostId} AND state = 'pending' AND executor = 'host') AS waiting`;
  const share = Math.max(0, Math.ceil((load!.total + load!.waiting) / ids.length) - load!.mine);
  if (share === 0) return [];
  const picked = await tx<{ session_id: string; seq: number }[]>`
    SELECT session_id, seq FROM ${brain.calls}
    WHERE host_id = ${hostId} AND state = 'pending' AND executor = 'host'
    ORDER BY started_at, session_id, seq LIMIT ${share}`;
  const claimed: ClaimRow[] = [];
  for (const p of picked) {
    const [row] = await tx<ClaimRow[]>`
      WITH c AS (
        UPDATE ${brain.calls} SET state = 'running', connection_id = ${connectionId}, dispatched_at = statement_timestamp()
        WHERE session_id = ${p.session_id} AND seq = ${p.seq} AND state = 'pending' AND executor = 'host'
        RETURNING tool, deadline_at, approved_input
      )
      SELECT ${p.session_id}::uuid AS session_id, ${p.seq}::bigint AS seq, c.tool,
             COALESCE(c.approved_input, r.payload->'input') AS input, c.approved_input IS NOT NULL AS approved,
             (extract(epoch FROM c.deadline_at) * 1000)::float8 AS deadline
      FROM c JOIN ${brain.records} r ON r.session_id = ${p.session_id} AND r.seq = ${p.seq}`;
    if (row) claimed.push(row);
  }
  return claimed;
}

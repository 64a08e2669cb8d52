import type { Sql } from "postgres";

/** A server is presumed dead when its heartbeat is older than this. */
export const SERVER_STALE_SECONDS = 3;

/** A claim's answer: the new fencing epoch, and whether the session was parked with nothing since. */
export interface Claim {
  epoch: number;
  /** The journal's last sequence. */
  lastSeq: number;
  /** Parked at `lastSeq` (migration 0018): nothing has happened since its Agentloop had nothing to do. */
  parked: boolean;
}

/**
 * Takes over a session's Agentloop for `serverId` when it has no live owner (or already is ours),
 * bumping the fencing epoch. Null when another live server owns it.
 *
 * `presumedLiveSince`: an owner whose last beat is at or after this moment counts as live even
 * when its beat is stale (a server back from an outage gives the others the time to beat again,
 * see server/src/liveness.ts). Null: the heartbeat alone decides.
 */
export async function claimSession(
  sql: Sql,
  sessionId: string,
  serverId: string,
  presumedLiveSince: Date | null = null,
): Promise<Claim | null> {
  const [row] = await sql<{ owner_epoch: string; last_seq: string; parked: boolean }[]>`
    UPDATE sessions s SET owner_id = ${serverId}, owner_epoch = s.owner_epoch + 1
    WHERE s.id = ${sessionId} AND s.status = 'active'
      AND (s.owner_id IS NULL OR s.owner_id = ${serverId} OR NOT EXISTS (
            SELECT 1 FROM servers v WHERE v.id = s.owner_id AND v.stopped_at IS NULL
              AND (v.heartbeat_at > now() - make_interval(secs => ${SERVER_STALE_SECONDS})
                   OR v.heartbeat_at >= ${presumedLiveSince}::timestamptz)))
    RETURNING s.owner_epoch, s.last_seq, s.parked_seq IS NOT DISTINCT FROM s.last_seq AS parked`;
  return row ? { epoch: Number(row.owner_epoch), lastSeq: Number(row.last_seq), parked: row.parked } : null;
}

/**
 * Records that each session's Agentloop was parked at `seq` with nothing to do, where the session
 * is still held with `epoch` (a claim since, by anyone, makes the entry a no-op).
 */
export async function markParked(
  sql: Sql,
  parked: readonly { id: string; epoch: number; seq: number }[],
): Promise<void> {
  if (parked.length === 0) return;
  await sql`
    UPDATE sessions s SET parked_seq = p.seq
    FROM unnest(${sql.array(parked.map((p) => p.id))}::uuid[], ${sql.array(parked.map((p) => p.epoch))}::bigint[],
                ${sql.array(parked.map((p) => p.seq))}::bigint[]) AS p(id, epoch, seq)
    WHERE s.id = p.id AND s.owner_epoch = p.epoch`;
}

/** The current owner and epoch, to let a server resume a session it owns after a restart. */
export async function sessionOwner(
  sql: Sql,
  sessionId: string,
): Promise<{ ownerId: string | null; epoch: number } | null> {
  const [row] = await sql<{ owner_id: string | null; owner_epoch: number }[]>`
    SELECT owner_id, owner_epoch FROM sessions WHERE id = ${sessionId}`;
  return row ? { ownerId: row.owner_id, epoch: row.owner_epoch } : null;
}

/**
 * Active sessions with no live owner: candidates to resume after a crash. `presumedLiveSince` as
 * for claimSession.
 */
export async function orphanedSessions(
  sql: Sql,
  limit = 500,
  presumedLiveSince: Date | null = null,
): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    SELECT s.id FROM sessions s
    WHERE s.status = 'active' AND (s.owner_id IS NULL OR NOT EXISTS (
      SELECT 1 FROM servers v WHERE v.id = s.owner_id AND v.stopped_at IS NULL
        AND (v.heartbeat_at > now() - make_interval(secs => ${SERVER_STALE_SECONDS})
             OR v.heartbeat_at >= ${presumedLiveSince}::timestamptz)))
    LIMIT ${limit}`;
  return rows.map((r) => r.id);
}

/**
 * Of sessions parked on `serverId` (each with the last sequence its actor knew), whether the
 * journal went past it (`ahead`) and whether the session is still this server's and active
 * (`ours`). Sessions deleted meanwhile are missing from the answer.
 */
export async function parkedSessionsAhead(
  sql: Sql,
  serverId: string,
  parked: readonly (readonly [id: string, seq: number])[],
): Promise<{ id: string; ahead: boolean; ours: boolean }[]> {
  if (parked.length === 0) return [];
  const ids = parked.map(([id]) => id);
  const seqs = parked.map(([, seq]) => seq);
  return sql<{ id: string; ahead: boolean; ours: boolean }[]>`
    SELECT s.id, s.last_seq > p.seq AS ahead, (s.owner_id = ${serverId} AND s.status = 'active') AS ours
    FROM unnest(${sql.array(ids)}::uuid[], ${sql.array(seqs)}::bigint[]) AS p(id, seq)
    JOIN sessions s ON s.id = p.id`;
}

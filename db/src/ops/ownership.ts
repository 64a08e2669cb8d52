import type { Sql, TransactionSql } from "postgres";
import { tables } from "../tables.js";

/** A server is presumed dead when its heartbeat is older than this. */
export const SERVER_STALE_SECONDS = 3;

/**
 * What a judging server knows when it calls a process dead or a session orphaned
 * (server/src/liveness.ts builds it). Both fields are on the database's clock; null: not given.
 */
export interface Judgement {
  /**
   * The judge's own last beat plus a beat interval: others are judged stale as of this moment at
   * the latest, not as of when the statement runs. A statement held in the pool's queue through
   * an outage runs after it, when every beat is old; judged as of then, it would take (or
   * declare dead) servers that had no chance to beat.
   */
  judgedAt: Date | null;
  /** Owners whose last beat is at or after this count as live though stale (after an outage). */
  presumedLiveSince: Date | null;
}

export const NO_JUDGEMENT: Judgement = { judgedAt: null, presumedLiveSince: null };

/** The moment before which a beat is stale, for `judge`. */
export function staleBefore(sql: Sql | TransactionSql, judge: Judgement) {
  return sql`LEAST(now(), ${judge.judgedAt}::timestamptz) - make_interval(secs => ${SERVER_STALE_SECONDS})`;
}

/**
 * Whether server row `v` counts as live for `judge`: not stopped, and beating (or presumed to).
 * Every statement that judges another process live or not says it with this.
 */
export function liveServer(sql: Sql | TransactionSql, judge: Judgement) {
  return sql`v.stopped_at IS NULL AND (v.heartbeat_at > ${staleBefore(sql, judge)}
    OR v.heartbeat_at >= ${judge.presumedLiveSince}::timestamptz)`;
}

/**
 * Whether session row `s` has no live owner for `judge`: none, or one that no longer counts as
 * live. Every statement that finds or takes an orphaned session says it with this.
 */
export function withoutLiveOwner(sql: Sql | TransactionSql, judge: Judgement) {
  const brain = tables(sql);
  return sql`(s.owner_id IS NULL OR NOT EXISTS (
    SELECT 1 FROM ${brain.servers} v WHERE v.id = s.owner_id AND ${liveServer(sql, judge)}))`;
}

/** A claim's answer: the new fencing epoch, and whether the session was parked with nothing since. */
export interface Claim {
  epoch: number;
  /** The journal's last sequence. */
  lastSeq: number;
  /** Parked at `lastSeq` (migration 0018): nothing has happened since its Agentloop had nothing to do. */
  parked: boolean;
  /** What its Agentloop starts from, read by the claim itself; null when parked (nothing starts). */
  session: ClaimedSession | null;
}

/** A claimed session's routing and model, as its Agentloop needs them. */
export interface ClaimedSession {
  /** As the database spells it. */
  id: string;
  hostId: string | null;
  /** `sessions.model` as stored (the provider's key is a secret of its own). */
  model: unknown;
  tools: unknown[];
  /** The named host serving each environment name (`session_hosts`). */
  namedHosts: Record<string, string>;
  /** The application token that owns it (null: the operator): its share of the workers. */
  tokenId: string | null;
}

/**
 * Takes over a session's Agentloop for `serverId` when it has no live owner (or already is ours),
 * bumping the fencing epoch. Null when another live server owns it (live as `judge` sees it).
 */
export async function claimSession(
  sql: Sql,
  sessionId: string,
  serverId: string,
  judge: Judgement = NO_JUDGEMENT,
): Promise<Claim | null> {
  const brain = tables(sql);
  // The session's routing comes back with the claim (not for a parked one, which starts nothing):
  // a resume reads neither the session row nor its named hosts after it.
  // On a Citus cluster the update's RETURNING may hold only immutable expressions, so the routing
  // is built from the claimed row outside it; every table is read by this session's id, so the
  // statement goes to the one worker that holds the session (db/src/citus.ts).
  const [row] = await sql<{ owner_epoch: string; last_seq: string; parked: boolean; session: ClaimedSession | null }[]>`
    WITH c AS (
      UPDATE ${brain.sessions} s SET owner_id = ${serverId}, owner_epoch = s.owner_epoch + 1
      WHERE s.id = ${sessionId} AND s.status = 'active'
        AND (s.owner_id = ${serverId} OR ${withoutLiveOwner(sql, judge)})
      RETURNING s.id, s.owner_epoch, s.last_seq, s.parked_seq IS NOT DISTINCT FROM s.last_seq AS parked,
        s.host_id, s.model, s.tools, s.token_id
    )
    SELECT c.owner_epoch, c.last_seq, c.parked,
      CASE WHEN NOT c.parked THEN jsonb_build_object(
        'id', c.id, 'hostId', c.host_id, 'model', c.model, 'tools', c.tools, 'tokenId', c.token_id,
        'namedHosts', (SELECT coalesce(jsonb_object_agg(sh.env_name, sh.host_id), '{}'::jsonb)
                       FROM ${brain.session_hosts} sh WHERE sh.session_id = ${sessionId})) END AS session
    FROM c`;
  if (!row) return null;
  return { epoch: Number(row.owner_epoch), lastSeq: Number(row.last_seq), parked: row.parked, session: row.session };
}

/**
 * Of `ids`, takes for `serverId` in one statement every session parked with nothing since and
 * without a live owner (as `judge` sees it), bumping each fencing epoch: a takeover of a stopped
 * server's idle sessions costs a statement a page, not one a session. Rows another transaction
 * holds are skipped (a commit, another server's claim), never waited for: a claim of many rows in
 * one order could deadlock with another in its own. On a Citus cluster (`skipLocked` false), which
 * locks no rows of many shards ahead, the update takes its rows as it goes, and a deadlock with
 * another claim is broken by Citus's detector (the claim fails; the next sweep claims again).
 * Returns each taken session's last sequence.
 */
export async function claimParkedSessions(
  sql: Sql,
  ids: readonly string[],
  serverId: string,
  judge: Judgement = NO_JUDGEMENT,
  options: { skipLocked?: boolean } = {},
): Promise<{ id: string; lastSeq: number }[]> {
  const brain = tables(sql);
  if (ids.length === 0) return [];
  const free = sql`
    s.id = ANY(${sql.array(ids as string[])}::uuid[]) AND s.status = 'active' AND s.parked_seq = s.last_seq
    AND (s.owner_id = ${serverId} OR ${withoutLiveOwner(sql, judge)})`;
  const rows =
    options.skipLocked === false
      ? await sql<{ id: string; last_seq: string }[]>`
          UPDATE ${brain.sessions} s SET owner_id = ${serverId}, owner_epoch = s.owner_epoch + 1
          WHERE ${free} RETURNING s.id, s.last_seq`
      : await sql<{ id: string; last_seq: string }[]>`
          WITH free AS (SELECT s.id FROM ${brain.sessions} s WHERE ${free} FOR UPDATE OF s SKIP LOCKED)
          UPDATE ${brain.sessions} s SET owner_id = ${serverId}, owner_epoch = s.owner_epoch + 1
          FROM free WHERE s.id = free.id
          RETURNING s.id, s.last_seq`;
  return rows.map((r) => ({ id: r.id, lastSeq: Number(r.last_seq) }));
}

/**
 * Records that each session's Agentloop was parked at `seq` with nothing to do, where the session
 * is still held with `epoch` (a claim since, by anyone, makes the entry a no-op).
 */
export async function markParked(
  sql: Sql,
  parked: readonly { id: string; epoch: number; seq: number }[],
): Promise<void> {
  const brain = tables(sql);
  if (parked.length === 0) return;
  await sql`
    UPDATE ${brain.sessions} s SET parked_seq = p.seq
    FROM unnest(${sql.array(parked.map((p) => p.id))}::uuid[], ${sql.array(parked.map((p) => p.epoch))}::bigint[],
                ${sql.array(parked.map((p) => p.seq))}::bigint[]) AS p(id, epoch, seq)
    WHERE s.id = p.id AND s.owner_epoch = p.epoch`;
}

/** The current owner and epoch, to let a server resume a session it owns after a restart. */
export async function sessionOwner(
  sql: Sql,
  sessionId: string,
): Promise<{ ownerId: string | null; epoch: number } | null> {
  const brain = tables(sql);
  const [row] = await sql<{ owner_id: string | null; owner_epoch: number }[]>`
    SELECT owner_id, owner_epoch FROM ${brain.sessions} WHERE id = ${sessionId}`;
  return row ? { ownerId: row.owner_id, epoch: row.owner_epoch } : null;
}

/** Active sessions with no live owner (as `judge` sees it): candidates to resume after a crash. */
export async function orphanedSessions(sql: Sql, limit = 500, judge: Judgement = NO_JUDGEMENT): Promise<string[]> {
  const brain = tables(sql);
  const rows = await sql<{ id: string }[]>`
    SELECT s.id FROM ${brain.sessions} s
    WHERE s.status = 'active' AND ${withoutLiveOwner(sql, judge)}
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
  const brain = tables(sql);
  if (parked.length === 0) return [];
  const ids = parked.map(([id]) => id);
  const seqs = parked.map(([, seq]) => seq);
  return sql<{ id: string; ahead: boolean; ours: boolean }[]>`
    SELECT s.id, s.last_seq > p.seq AS ahead, (s.owner_id = ${serverId} AND s.status = 'active') AS ours
    FROM unnest(${sql.array(ids)}::uuid[], ${sql.array(seqs)}::bigint[]) AS p(id, seq)
    JOIN ${brain.sessions} s ON s.id = p.id`;
}

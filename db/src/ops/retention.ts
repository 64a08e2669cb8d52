import type { Sql } from "postgres";

/** How long idempotency keys are kept, whatever the retention window: a retry comes within a day. */
export const IDEMPOTENCY_KEEP_SECONDS = 24 * 3600;
/** Rows per batch: each batch is one short transaction. */
export const PRUNE_BATCH = 50;
/** Journal records per batch: a long session's journal goes in several transactions, not one. */
export const PRUNE_RECORDS_BATCH = 5000;

/** Rows deleted (or, with dryRun, that would be) per table. */
export interface PruneCounts {
  sessions: number;
  /** Journal records of those sessions. */
  records: number;
  idempotencyKeys: number;
  hostConnections: number;
  /** Named hosts' replica registrations not connected within the window. */
  replicas: number;
  servers: number;
  components: number;
}

export interface PruneOptions {
  /** Rows older than this many seconds go; ended sessions by `ended_at`. */
  olderThanSeconds: number;
  /** Count what would go, delete nothing. */
  dryRun?: boolean;
  /** Rows per batch (default PRUNE_BATCH). */
  batch?: number;
  /** Records per batch (default PRUNE_RECORDS_BATCH). */
  recordsBatch?: number;
  /** Wait for another pruner instead of skipping this run (the CLI waits; servers skip). */
  wait?: boolean;
  /** Stops between batches (a server shutting down). */
  signal?: AbortSignal;
}

/** One pruner at a time per schema: servers that find it taken skip their turn. */
function lockKey(schema: string): string {
  return `brain.prune:${schema}`;
}

/**
 * Deletes what retention bounds, in batches of short transactions that lock only the rows they
 * delete (SKIP LOCKED: a row the hot path holds is left for the next run, never waited for).
 * Only ended sessions are deleted, with their records, calls and the rest by cascade; nothing of
 * an active session is read for update. Returns null when another pruner holds the lock.
 */
export async function prune(sql: Sql, schema: string, options: PruneOptions): Promise<PruneCounts | null> {
  const reserved = await sql.reserve();
  try {
    const key = lockKey(schema);
    if (options.wait) await reserved`SELECT pg_advisory_lock(hashtextextended(${key}, 0))`;
    else {
      const [row] = await reserved<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS ok`;
      if (!row?.ok) return null;
    }
    try {
      return options.dryRun ? await count(sql, options.olderThanSeconds) : await pruneBatches(sql, options);
    } finally {
      await reserved`SELECT pg_advisory_unlock(hashtextextended(${key}, 0))`;
    }
  } finally {
    reserved.release();
  }
}

async function pruneBatches(sql: Sql, o: PruneOptions): Promise<PruneCounts> {
  const batch = o.batch ?? PRUNE_BATCH;
  const secs = o.olderThanSeconds;
  const counts: PruneCounts = {
    sessions: 0,
    records: 0,
    idempotencyKeys: 0,
    hostConnections: 0,
    replicas: 0,
    servers: 0,
    components: 0,
  };
  // Batches until one comes back short: each is its own transaction, so none holds locks long.
  const loop = async (limit: number, step: (limit: number) => Promise<number>): Promise<number> => {
    let total = 0;
    for (;;) {
      if (o.signal?.aborted) return total;
      const n = await step(limit);
      total += n;
      if (n < limit) return total;
    }
  };
  // Expired sessions' journals first, a chunk at a time (their calls go with their records), so
  // deleting a session row below cascades only small tables.
  counts.records = await loop(o.recordsBatch ?? PRUNE_RECORDS_BATCH, async (limit) => {
    const rows = await sql`
      DELETE FROM records WHERE (session_id, seq) IN (
        SELECT r.session_id, r.seq FROM sessions s JOIN records r ON r.session_id = s.id
        WHERE s.status = 'ended' AND s.ended_at < now() - make_interval(secs => ${secs})
        ORDER BY s.ended_at, r.seq LIMIT ${limit}
        FOR UPDATE OF r SKIP LOCKED)
      RETURNING seq`;
    return rows.length;
  });
  // Then the sessions: ended ones release servers (owner_id) and components (tools) in turn.
  counts.sessions = await loop(batch, async (limit) => {
    const rows = await sql`
      DELETE FROM sessions WHERE id IN (
        SELECT id FROM sessions
        WHERE status = 'ended' AND ended_at < now() - make_interval(secs => ${secs})
        ORDER BY ended_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED)
        AND status = 'ended'
      RETURNING id`;
    return rows.length;
  });
  // Keys are small rows: larger batches.
  counts.idempotencyKeys = await loop(batch * 20, async (limit) => {
    const rows = await sql`
      DELETE FROM idempotency_keys WHERE (scope, key_hash) IN (
        SELECT scope, key_hash FROM idempotency_keys
        WHERE created_at < now() - make_interval(secs => ${IDEMPOTENCY_KEEP_SECONDS})
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING scope`;
    return rows.length;
  });
  // A closed connection with a call still open on it (cannot happen: closing ends them) is kept.
  counts.hostConnections = await loop(batch, async (limit) => {
    const rows = await sql`
      DELETE FROM host_connections WHERE id IN (
        SELECT hc.id FROM host_connections hc
        WHERE hc.closed_at < now() - make_interval(secs => ${secs})
          AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.connection_id = hc.id AND c.state IN ('running', 'returned'))
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    return rows.length;
  });
  // A replica registration (one per serving process) not connected within the window: its process
  // is long gone. Its closed connections go with it (cascade).
  counts.replicas = await loop(batch, async (limit) => {
    const rows = await sql`
      DELETE FROM host_replicas WHERE id IN (
        SELECT r.id FROM host_replicas r
        WHERE r.created_at < now() - make_interval(secs => ${secs})
          AND NOT EXISTS (SELECT 1 FROM host_connections h WHERE h.replica_id = r.id
            AND (h.closed_at IS NULL OR h.closed_at >= now() - make_interval(secs => ${secs})))
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    return rows.length;
  });
  // A server or worker stopped (and silent) for the window, that nothing refers to any more.
  counts.servers = await loop(batch, async (limit) => {
    const rows = await sql`
      DELETE FROM servers WHERE id IN (
        SELECT s.id FROM servers s
        WHERE s.stopped_at < now() - make_interval(secs => ${secs})
          AND s.heartbeat_at < now() - make_interval(secs => ${secs})
          AND NOT EXISTS (SELECT 1 FROM sessions x WHERE x.owner_id = s.id)
          AND NOT EXISTS (SELECT 1 FROM host_connections h WHERE h.server_id = s.id)
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING id`;
    return rows.length;
  });
  // Components no session (active or within the window) places, uploaded before the window.
  // Components are large rows and the reference check scans sessions' tools: few at a time.
  counts.components = await loop(Math.min(batch, 10), async (limit) => {
    const rows = await sql`
      DELETE FROM components WHERE sha256 IN (
        SELECT c.sha256 FROM components c
        WHERE c.created_at < now() - make_interval(secs => ${secs})
          AND NOT EXISTS (SELECT 1 FROM sessions s WHERE strpos(s.tools::text, c.sha256) > 0)
        LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING sha256`;
    return rows.length;
  });
  return counts;
}

/** What a prune would delete now (the same conditions, counted). */
async function count(sql: Sql, secs: number): Promise<PruneCounts> {
  const [row] = await sql<Record<keyof PruneCounts, string>[]>`
    SELECT
      (SELECT count(*) FROM sessions
        WHERE status = 'ended' AND ended_at < now() - make_interval(secs => ${secs})) AS sessions,
      (SELECT coalesce(sum(last_seq), 0) FROM sessions
        WHERE status = 'ended' AND ended_at < now() - make_interval(secs => ${secs})) AS records,
      (SELECT count(*) FROM idempotency_keys
        WHERE created_at < now() - make_interval(secs => ${IDEMPOTENCY_KEEP_SECONDS})) AS "idempotencyKeys",
      (SELECT count(*) FROM host_connections hc WHERE hc.closed_at < now() - make_interval(secs => ${secs})
        AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.connection_id = hc.id AND c.state IN ('running', 'returned')))
        AS "hostConnections",
      (SELECT count(*) FROM host_replicas r WHERE r.created_at < now() - make_interval(secs => ${secs})
        AND NOT EXISTS (SELECT 1 FROM host_connections h WHERE h.replica_id = r.id
          AND (h.closed_at IS NULL OR h.closed_at >= now() - make_interval(secs => ${secs})))) AS replicas,
      (SELECT count(*) FROM servers s
        WHERE s.stopped_at < now() - make_interval(secs => ${secs})
          AND s.heartbeat_at < now() - make_interval(secs => ${secs})) AS servers,
      (SELECT count(*) FROM components c WHERE c.created_at < now() - make_interval(secs => ${secs})
        AND NOT EXISTS (SELECT 1 FROM sessions s WHERE strpos(s.tools::text, c.sha256) > 0)) AS components`;
  const r = row!;
  return {
    sessions: Number(r.sessions),
    records: Number(r.records),
    idempotencyKeys: Number(r.idempotencyKeys),
    hostConnections: Number(r.hostConnections),
    replicas: Number(r.replicas),
    servers: Number(r.servers),
    components: Number(r.components),
  };
}

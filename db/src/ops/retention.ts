import type { Sql } from "postgres";
import { openLane, throughPooler } from "../connect.js";
import { type Relation, type Tables, tables } from "../tables.js";
import { dropJournalWeek } from "./journal-partitions.js";
import { deleteSessionsIn } from "./session-delete.js";

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
  /**
   * Host registrations no session refers to any more, unconnected for the window (a registration
   * with sessions placed in it never expires; once they are all pruned, it may).
   */
  hosts: number;
  /** Journal writers' marks (one per process ever started) not written for the window. */
  writerMarks: number;
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
 * Only ended sessions are deleted, with their records, calls and the rest; nothing of
 * an active session is read for update. Returns null when another pruner holds the lock.
 */
export async function prune(sql: Sql, schema: string, options: PruneOptions): Promise<PruneCounts | null> {
  // The session lock lives on a one-connection pool of its own, not a reserved connection: a
  // reserved connection whose backend dies (a database restart mid-prune) crashes the process on
  // its next query, inside postgres.js. If this one dies, Postgres has released the lock with it.
  const reserved = openLane(sql, "brain-prune", { onClose: () => {} });
  try {
    // Through a pooler, a session lock would stay on whichever backend took it: none is taken.
    // Pruners side by side only share the work (each batch skips the rows another holds).
    if (throughPooler(reserved)) return await run(sql, options);
    const key = lockKey(schema);
    if (options.wait) await reserved`SELECT pg_advisory_lock(hashtextextended(${key}, 0))`;
    else {
      const [row] = await reserved<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS ok`;
      if (!row?.ok) return null;
    }
    try {
      return await run(sql, options);
    } finally {
      await reserved`SELECT pg_advisory_unlock(hashtextextended(${key}, 0))`;
    }
  } finally {
    await reserved.end({ timeout: 1 }).catch(() => {});
  }
}

async function pruneBatches(sql: Sql, o: PruneOptions): Promise<PruneCounts> {
  const brain = tables(sql);
  const batch = o.batch ?? PRUNE_BATCH;
  const secs = o.olderThanSeconds;
  const counts = { sessions: 0, records: 0 } as PruneCounts;
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
  // Whole weeks of expired sessions first: their partitions are dropped, not their rows deleted.
  for (;;) {
    if (o.signal?.aborted) return counts;
    const week = await dropJournalWeek(sql, secs);
    if (week.weeks === 0) break;
    counts.sessions += week.sessions;
    counts.records += week.records;
  }
  // Then the journals of expired sessions elsewhere (the default partition, a week held by a
  // session still running), a chunk at a time, each record with its call (no foreign key cascades
  // between them: migration 0014), so deleting a session below has little left to delete.
  counts.records += await loop(o.recordsBatch ?? PRUNE_RECORDS_BATCH, async (limit) => {
    const [row] = await sql<{ n: number }[]>`
      WITH d AS (
        DELETE FROM ${brain.records} WHERE (session_id, seq) IN (
          SELECT r.session_id, r.seq FROM ${brain.sessions} s JOIN ${brain.records} r ON r.session_id = s.id
          WHERE s.status = 'ended' AND s.ended_at < now() - make_interval(secs => ${secs})
          ORDER BY s.ended_at, r.seq LIMIT ${limit}
          FOR UPDATE OF r SKIP LOCKED)
        RETURNING session_id, seq
      ),
      c AS (DELETE FROM ${brain.calls} x USING d WHERE x.session_id = d.session_id AND x.seq = d.seq)
      SELECT count(*)::int AS n FROM d`;
    return row?.n ?? 0;
  });
  // Then the sessions, each with what is left under it (session-delete.ts: the rows locked, then
  // their children, then the rows, in one transaction). Ended ones release servers (owner_id) and
  // components (tools) in turn.
  counts.sessions += await loop(batch, (limit) =>
    sql.begin(async (tx) => {
      const chosen = await tx<{ id: string }[]>`
        SELECT id FROM ${brain.sessions}
        WHERE status = 'ended' AND ended_at < now() - make_interval(secs => ${secs})
        ORDER BY ended_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED`;
      await deleteSessionsIn(
        tx,
        chosen.map((r) => r.id),
      );
      return chosen.length;
    }),
  );
  for (const rule of RULES) {
    counts[rule.counts] = await loop(rule.batch(batch), async (limit) => {
      const rows = await sql`
        DELETE FROM ${brain[rule.from]} ${sql(rule.as)} WHERE (${sql.unsafe(rule.key)}) IN (
          SELECT ${sql.unsafe(rule.key)} FROM ${brain[rule.from]} ${sql(rule.as)} WHERE ${rule.expired(sql, secs, brain)}
          LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING 1`;
      return rows.length;
    });
  }
  return counts;
}

/** What a prune would delete now: the same conditions, counted. */
async function count(sql: Sql, secs: number): Promise<PruneCounts> {
  const brain = tables(sql);
  const expired = sql`status = 'ended' AND ended_at < now() - make_interval(secs => ${secs})`;
  const [journals] = await sql<{ sessions: string; records: string }[]>`
    SELECT count(*) AS sessions, coalesce(sum(last_seq), 0) AS records FROM ${brain.sessions} WHERE ${expired}`;
  const counts = { sessions: Number(journals!.sessions), records: Number(journals!.records) } as PruneCounts;
  for (const rule of RULES) {
    const [row] = await sql<{ n: string }[]>`
      SELECT count(*) AS n FROM ${brain[rule.from]} ${sql(rule.as)} WHERE ${rule.expired(sql, secs, brain)}`;
    counts[rule.counts] = Number(row!.n);
  }
  return counts;
}

function run(sql: Sql, options: PruneOptions): Promise<PruneCounts> {
  return options.dryRun ? count(sql, options.olderThanSeconds) : pruneBatches(sql, options);
}

/**
 * What else retention bounds, in the order it goes: after the sessions, which release servers
 * (owner_id), components (tools) and hosts in turn. Each condition is written once and serves both
 * the delete and the dry run. `from` and `key` are fixed SQL of this module, never input.
 */
interface Rule {
  counts: Exclude<keyof PruneCounts, "sessions" | "records">;
  from: Relation;
  /** The name the condition and the key call the table by. */
  as: string;
  key: string;
  batch: (base: number) => number;
  expired: (sql: Sql, secs: number, brain: Tables) => ReturnType<Sql>;
}

const ago = (sql: Sql, secs: number) => sql`now() - make_interval(secs => ${secs})`;

const RULES: Rule[] = [
  {
    // Small rows: larger batches. Kept a day whatever the window: a retry comes within a day.
    counts: "idempotencyKeys",
    from: "idempotency_keys",
    as: "idempotency_keys",
    key: "scope, key_hash",
    batch: (b) => b * 20,
    expired: (sql) => sql`created_at < ${ago(sql, IDEMPOTENCY_KEEP_SECONDS)}`,
  },
  {
    // A closed connection with a call still open on it (cannot happen: closing ends them) is kept.
    counts: "hostConnections",
    from: "host_connections",
    as: "hc",
    key: "hc.id",
    batch: (b) => b,
    expired: (sql, secs, brain) => sql`hc.closed_at < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.calls} c WHERE c.connection_id = hc.id AND c.state IN ('running', 'returned'))`,
  },
  {
    // A replica registration (one per serving process) not connected within the window: its
    // process is long gone. Its closed connections go with it (cascade).
    counts: "replicas",
    from: "host_replicas",
    as: "r",
    key: "r.id",
    batch: (b) => b,
    expired: (sql, secs, brain) => sql`r.created_at < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.host_connections} h WHERE h.replica_id = r.id
        AND (h.closed_at IS NULL OR h.closed_at >= ${ago(sql, secs)}))`,
  },
  {
    // A server or worker stopped (and silent) for the window, that nothing refers to any more.
    counts: "servers",
    from: "servers",
    as: "s",
    key: "s.id",
    batch: (b) => b,
    expired: (sql, secs, brain) => sql`s.stopped_at < ${ago(sql, secs)} AND s.heartbeat_at < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.sessions} x WHERE x.owner_id = s.id)
      AND NOT EXISTS (SELECT 1 FROM ${brain.host_connections} h WHERE h.server_id = s.id)`,
  },
  {
    // Components no session (active or within the window) places, uploaded before the window.
    // Large rows, and the reference check scans sessions' tools: few at a time.
    counts: "components",
    from: "components",
    as: "c",
    key: "c.sha256",
    batch: (b) => Math.min(b, 10),
    expired: (sql, secs, brain) => sql`c.created_at < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.sessions} s WHERE strpos(s.tools::text, c.sha256) > 0)`,
  },
  {
    // What is left of a host no session refers to any more is its row (and closed connections
    // older than the window, which go with it by cascade).
    counts: "hosts",
    from: "hosts",
    as: "h",
    key: "h.id",
    batch: (b) => b,
    expired: (sql, secs, brain) => sql`h.created_at < ${ago(sql, secs)}
      AND coalesce(h.last_connected_at, h.created_at) < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.sessions} s WHERE s.host_id = h.id)
      AND NOT EXISTS (SELECT 1 FROM ${brain.session_hosts} sh WHERE sh.host_id = h.id)
      AND NOT EXISTS (SELECT 1 FROM ${brain.calls} c WHERE c.host_id = h.id)
      AND NOT EXISTS (SELECT 1 FROM ${brain.host_connections} hc WHERE hc.host_id = h.id
        AND (hc.closed_at IS NULL OR hc.closed_at >= ${ago(sql, secs)}))`,
  },
  {
    counts: "writerMarks",
    from: "writer_marks",
    as: "writer_marks",
    key: "writer_id",
    batch: (b) => b,
    expired: (sql, secs) => sql`at < ${ago(sql, secs)}`,
  },
];

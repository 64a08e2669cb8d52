import type { Sql } from "postgres";
import { distributedOnCitus } from "../citus.js";
import { openLane, throughPooler } from "../connect.js";
import { tables } from "../tables.js";
import { dropEmptyJournalWeeks, dropJournalWeek } from "./journal-partitions.js";
import { expired, noneCounted, type PruneCounts, RULES, type Rule } from "./retention-rules.js";
import { pruneShared } from "./retention-shared.js";
import { deleteSessionsIn } from "./session-delete.js";

export { IDEMPOTENCY_KEEP_SECONDS, type PruneCounts } from "./retention-rules.js";

/** Rows per batch: each batch is one short transaction. */
export const PRUNE_BATCH = 50;
/** Journal records per batch: a long session's journal goes in several transactions, not one. */
export const PRUNE_RECORDS_BATCH = 5000;
/** Keys a dry run on a Citus cluster checks at a time. */
const COUNT_PAGE = 1000;

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
  /**
   * The tables are distributed on a Citus cluster (docs/scaling.md; default: asked of the
   * database), which locks rows of one shard at a time: each ended session is deleted in a
   * transaction of its own, a week is dropped once it is left empty, and a shared (reference) table's rows are
   * checked against the session tables that hold them a batch at a time (retention-shared.ts).
   */
  citus?: boolean;
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
    if (throughPooler(reserved)) return await run(sql, schema, options);
    const key = lockKey(schema);
    if (options.wait) await reserved`SELECT pg_advisory_lock(hashtextextended(${key}, 0))`;
    else {
      const [row] = await reserved<{ ok: boolean }[]>`SELECT pg_try_advisory_lock(hashtextextended(${key}, 0)) AS ok`;
      if (!row?.ok) return null;
    }
    try {
      return await run(sql, schema, options);
    } finally {
      await reserved`SELECT pg_advisory_unlock(hashtextextended(${key}, 0))`;
    }
  } finally {
    await reserved.end({ timeout: 1 }).catch(() => {});
  }
}

/** On a Citus cluster, a rule whose rows session tables hold goes a batch of keys at a time. */
const apart = (rule: Rule, citus = false) => citus && rule.holders.length > 0;

/** Runs `step` with `limit` until it does less than that (each its own transaction), or `signal` aborts. */
async function loop(signal: AbortSignal | undefined, limit: number, step: (limit: number) => Promise<number>) {
  let total = 0;
  for (;;) {
    if (signal?.aborted) return total;
    const n = await step(limit);
    total += n;
    if (n < limit) return total;
  }
}

async function pruneBatches(sql: Sql, o: PruneOptions): Promise<PruneCounts> {
  const counts = o.citus ? await pruneSessionsApart(sql, o) : await pruneJournals(sql, o);
  const brain = tables(sql);
  for (const rule of RULES) {
    const limit = rule.batch(o.batch ?? PRUNE_BATCH);
    if (apart(rule, o.citus)) {
      counts[rule.counts] = await pruneShared(sql, rule, o.olderThanSeconds, limit, { signal: o.signal });
      continue;
    }
    counts[rule.counts] = await loop(o.signal, limit, async (limit) => {
      const rows = await sql`
        DELETE FROM ${brain[rule.from]} ${sql(rule.as)} WHERE (${sql.unsafe(rule.key)}) IN (
          SELECT ${sql.unsafe(rule.key)} FROM ${brain[rule.from]} ${sql(rule.as)} WHERE ${expired(rule, sql, o.olderThanSeconds, brain)}
          LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING 1`;
      return rows.length;
    });
  }
  return counts;
}

/**
 * On a Citus cluster: the ended sessions past the window, each deleted with everything under it in
 * a transaction of its own (session-delete.ts), since Citus locks the rows of one shard at a time.
 * Read without a lock; one another pruner or a delete took meanwhile is simply not found.
 */
async function pruneSessionsApart(sql: Sql, o: PruneOptions): Promise<PruneCounts> {
  const brain = tables(sql);
  const counts = noneCounted();
  await loop(o.signal, o.batch ?? PRUNE_BATCH, async (limit) => {
    const expired = await sql<{ id: string; last_seq: number }[]>`
      SELECT id, last_seq FROM ${brain.sessions}
      WHERE status = 'ended' AND ended_at < now() - make_interval(secs => ${o.olderThanSeconds})
      ORDER BY ended_at LIMIT ${limit}`;
    for (const { id, last_seq } of expired) {
      if (o.signal?.aborted) return 0;
      const [gone] = await sql.begin((tx) => deleteSessionsIn(tx, [id]));
      if (gone) {
        counts.sessions++;
        counts.records += last_seq;
      }
    }
    return expired.length;
  });
  // Then the weeks that left empty, one a transaction (a detach waits for its lock).
  let dropped = 1;
  while (dropped > 0 && !o.signal?.aborted) dropped = await dropEmptyJournalWeeks(sql, o.olderThanSeconds);
  return counts;
}

async function pruneJournals(sql: Sql, o: PruneOptions): Promise<PruneCounts> {
  const brain = tables(sql);
  const batch = o.batch ?? PRUNE_BATCH;
  const secs = o.olderThanSeconds;
  const counts = noneCounted();
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
  counts.records += await loop(o.signal, o.recordsBatch ?? PRUNE_RECORDS_BATCH, async (limit) => {
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
  counts.sessions += await loop(o.signal, batch, (limit) =>
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
  return counts;
}

/** What a prune would delete now: the same conditions, counted. */
async function count(sql: Sql, secs: number, citus = false): Promise<PruneCounts> {
  const brain = tables(sql);
  const ended = sql`status = 'ended' AND ended_at < now() - make_interval(secs => ${secs})`;
  const [journals] = await sql<{ sessions: string; records: string }[]>`
    SELECT count(*) AS sessions, coalesce(sum(last_seq), 0) AS records FROM ${brain.sessions} WHERE ${ended}`;
  const counts = { ...noneCounted(), sessions: Number(journals!.sessions), records: Number(journals!.records) };
  for (const rule of RULES) {
    if (apart(rule, citus)) {
      counts[rule.counts] = await pruneShared(sql, rule, secs, COUNT_PAGE, { dryRun: true });
      continue;
    }
    const [row] = await sql<{ n: string }[]>`
      SELECT count(*) AS n FROM ${brain[rule.from]} ${sql(rule.as)} WHERE ${expired(rule, sql, secs, brain)}`;
    counts[rule.counts] = Number(row!.n);
  }
  return counts;
}

async function run(sql: Sql, schema: string, options: PruneOptions): Promise<PruneCounts> {
  const o = { ...options, citus: options.citus ?? (await distributedOnCitus(sql, schema)) };
  return o.dryRun ? count(sql, o.olderThanSeconds, o.citus) : pruneBatches(sql, o);
}

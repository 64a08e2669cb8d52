import type { Sql, TransactionSql } from "postgres";
import type { Relation, Tables } from "../tables.js";

// What retention (retention.ts) bounds beside the journals, and what it counts.

type Db = Sql | TransactionSql;

/** How long idempotency keys are kept, whatever the retention window: a retry comes within a day. */
export const IDEMPOTENCY_KEEP_SECONDS = 24 * 3600;

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

/** Every count at 0. */
export function noneCounted(): PruneCounts {
  return {
    sessions: 0,
    records: 0,
    idempotencyKeys: 0,
    hostConnections: 0,
    replicas: 0,
    servers: 0,
    components: 0,
    hosts: 0,
    writerMarks: 0,
  };
}

/**
 * Rows of a session's tables that keep a shared row from expiring: they name its key in `column`
 * (or, `contains`, somewhere in that column's text). On a Citus cluster these tables are
 * distributed and the shared ones are reference tables, which Citus will not correlate with them:
 * there the holders are asked for a batch's keys at once (retention-shared.ts).
 */
export interface Holder {
  from: Relation;
  column: string;
  contains?: boolean;
  /** Fixed SQL of this module on the holding row (`x`), never input. */
  where?: string;
}

/**
 * What else retention bounds, in the order it goes: after the sessions, which release servers
 * (owner_id), components (tools) and hosts in turn. A row goes when it is `due` (a condition on
 * its own table and other shared ones) and no `holders` row names it. Each condition is written
 * once and serves the delete and the dry run alike. `from`, `key` and `holders` are fixed SQL of
 * this module, never input.
 */
export interface Rule {
  counts: Exclude<keyof PruneCounts, "sessions" | "records">;
  from: Relation;
  /** The name the condition and the key call the table by. */
  as: string;
  key: string;
  /** The key's type, for a rule with holders (its key is one column). */
  keyType?: "uuid" | "text";
  batch: (base: number) => number;
  due: (sql: Db, secs: number, brain: Tables) => ReturnType<Sql>;
  holders: Holder[];
}

const ago = (sql: Db, secs: number) => sql`now() - make_interval(secs => ${secs})`;

export const RULES: Rule[] = [
  {
    // Small rows: larger batches. Kept a day whatever the window: a retry comes within a day.
    counts: "idempotencyKeys",
    from: "idempotency_keys",
    as: "idempotency_keys",
    key: "scope, key_hash",
    batch: (b) => b * 20,
    due: (sql) => sql`created_at < ${ago(sql, IDEMPOTENCY_KEEP_SECONDS)}`,
    holders: [],
  },
  {
    // A closed connection with a call still open on it (cannot happen: closing ends them) is kept.
    counts: "hostConnections",
    from: "host_connections",
    as: "hc",
    key: "hc.id",
    keyType: "uuid",
    batch: (b) => b,
    due: (sql, secs) => sql`hc.closed_at < ${ago(sql, secs)}`,
    holders: [{ from: "calls", column: "connection_id", where: "x.state IN ('running', 'returned')" }],
  },
  {
    // A replica registration (one per serving process) not connected within the window: its
    // process is long gone. Its closed connections go with it (cascade).
    counts: "replicas",
    from: "host_replicas",
    as: "r",
    key: "r.id",
    batch: (b) => b,
    due: (sql, secs, brain) => sql`r.created_at < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.host_connections} h WHERE h.replica_id = r.id
        AND (h.closed_at IS NULL OR h.closed_at >= ${ago(sql, secs)}))`,
    holders: [],
  },
  {
    // A server or worker stopped (and silent) for the window, that nothing refers to any more.
    counts: "servers",
    from: "servers",
    as: "s",
    key: "s.id",
    keyType: "uuid",
    batch: (b) => b,
    due: (sql, secs, brain) => sql`s.stopped_at < ${ago(sql, secs)} AND s.heartbeat_at < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.host_connections} h WHERE h.server_id = s.id)`,
    holders: [{ from: "sessions", column: "owner_id" }],
  },
  {
    // Components no session (active or within the window) places, uploaded before the window.
    // Large rows, and the reference check scans sessions' tools: few at a time.
    counts: "components",
    from: "components",
    as: "c",
    key: "c.sha256",
    keyType: "text",
    batch: (b) => Math.min(b, 10),
    due: (sql, secs) => sql`c.created_at < ${ago(sql, secs)}`,
    holders: [{ from: "sessions", column: "tools", contains: true }],
  },
  {
    // What is left of a host no session refers to any more is its row (and closed connections
    // older than the window, which go with it by cascade).
    counts: "hosts",
    from: "hosts",
    as: "h",
    key: "h.id",
    keyType: "uuid",
    batch: (b) => b,
    due: (sql, secs, brain) => sql`h.created_at < ${ago(sql, secs)}
      AND coalesce(h.last_connected_at, h.created_at) < ${ago(sql, secs)}
      AND NOT EXISTS (SELECT 1 FROM ${brain.host_connections} hc WHERE hc.host_id = h.id
        AND (hc.closed_at IS NULL OR hc.closed_at >= ${ago(sql, secs)}))`,
    holders: [
      { from: "sessions", column: "host_id" },
      { from: "session_hosts", column: "host_id" },
      { from: "calls", column: "host_id" },
    ],
  },
  {
    counts: "writerMarks",
    from: "writer_marks",
    as: "writer_marks",
    key: "writer_id",
    batch: (b) => b,
    due: (sql, secs) => sql`at < ${ago(sql, secs)}`,
    holders: [],
  },
];

/**
 * On one Postgres, the whole condition in one: due, and no holder row naming it (correlated on
 * the rule's key).
 */
export function expired(rule: Rule, sql: Sql, secs: number, brain: Tables): ReturnType<Sql> {
  let condition = rule.due(sql, secs, brain);
  const key = sql.unsafe(rule.key);
  for (const h of rule.holders) {
    const names = h.contains ? sql`strpos(x.${sql(h.column)}::text, ${key}) > 0` : sql`x.${sql(h.column)} = ${key}`;
    const where = h.where ? sql`AND ${sql.unsafe(h.where)}` : sql``;
    condition = sql`${condition} AND NOT EXISTS (SELECT 1 FROM ${brain[h.from]} x WHERE ${names} ${where})`;
  }
  return condition;
}

import type { Sql } from "postgres";
import type { Relation, Tables } from "../tables.js";

// What retention (retention.ts) bounds beside the journals, and what it counts.

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
  /** A table shared by all sessions: a reference table on a Citus cluster, where it is not pruned. */
  shared: boolean;
  batch: (base: number) => number;
  expired: (sql: Sql, secs: number, brain: Tables) => ReturnType<Sql>;
}

const ago = (sql: Sql, secs: number) => sql`now() - make_interval(secs => ${secs})`;

export const RULES: Rule[] = [
  {
    // Small rows: larger batches. Kept a day whatever the window: a retry comes within a day.
    counts: "idempotencyKeys",
    from: "idempotency_keys",
    shared: false,
    as: "idempotency_keys",
    key: "scope, key_hash",
    batch: (b) => b * 20,
    expired: (sql) => sql`created_at < ${ago(sql, IDEMPOTENCY_KEEP_SECONDS)}`,
  },
  {
    // A closed connection with a call still open on it (cannot happen: closing ends them) is kept.
    counts: "hostConnections",
    from: "host_connections",
    shared: true,
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
    shared: true,
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
    shared: true,
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
    shared: true,
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
    shared: true,
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
    shared: false,
    as: "writer_marks",
    key: "writer_id",
    batch: (b) => b,
    expired: (sql, secs) => sql`at < ${ago(sql, secs)}`,
  },
];

import type { ReservedSql, Sql } from "postgres";
import { createDelegation, delegatesOnCitus, refreshDelegation } from "./citus-delegation.js";
import { DISTRIBUTED, REFERENCE } from "./citus-tables.js";
import { migrateLockKey } from "./migrate-lock.js";
import { quoteIdent } from "./schema-name.js";

export { DISTRIBUTED, REFERENCE } from "./citus-tables.js";

/**
 * Foreign keys Citus refuses while their tables are being placed (a local table between a
 * reference and a distributed one), dropped before and added back after. The first three are the
 * session's references, which migration 0016 checks with triggers on one Postgres: a trigger on a
 * distributed table runs on each shard and cannot lock a parent on another node, so on a cluster
 * they are foreign keys to reference tables again.
 */
const KEYS: readonly { table: string; name: string; definition: string }[] = [
  { table: "sessions", name: "sessions_host_id_fkey", definition: "FOREIGN KEY (host_id) REFERENCES hosts (id)" },
  { table: "sessions", name: "sessions_owner_id_fkey", definition: "FOREIGN KEY (owner_id) REFERENCES servers (id)" },
  {
    table: "sessions",
    name: "sessions_token_id_fkey",
    definition: "FOREIGN KEY (token_id) REFERENCES app_tokens (id)",
  },
  {
    table: "session_hosts",
    name: "session_hosts_host_id_fkey",
    definition: "FOREIGN KEY (host_id) REFERENCES hosts (id)",
  },
  {
    table: "mcp_tasks",
    name: "mcp_tasks_token_id_fkey",
    definition: "FOREIGN KEY (token_id) REFERENCES app_tokens (id)",
  },
  {
    table: "mcp_tasks",
    name: "mcp_tasks_session_id_seq_fkey",
    definition: "FOREIGN KEY (session_id, seq) REFERENCES calls (session_id, seq) ON DELETE CASCADE",
  },
];

/** Migration 0016's reference triggers, replaced on a cluster by the keys above. */
const TRIGGERS = [
  { table: "sessions", name: "sessions_references_inserted" },
  { table: "sessions", name: "sessions_references_updated" },
  { table: "hosts", name: "hosts_referenced_by_sessions" },
  { table: "servers", name: "servers_referenced_by_sessions" },
  { table: "app_tokens", name: "app_tokens_referenced_by_sessions" },
] as const;

/** True when this database has the citus extension. */
export async function citusInstalled(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ on: boolean }[]>`SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'citus') AS on`;
  return row?.on === true;
}

/** How each of Brain's tables is placed now: 'h' hash-distributed, 'n' reference, absent: local. */
async function placement(sql: Sql | ReservedSql, schema: string): Promise<Map<string, string>> {
  const rows = await sql<{ name: string; method: string }[]>`
    SELECT c.relname AS name, p.partmethod::text AS method
    FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
    WHERE c.relnamespace = to_regnamespace(${schema}) AND NOT c.relispartition`;
  return new Map(rows.map((r) => [r.name, r.method]));
}

/** Whether every table is where placeOnCitus puts it, and the writes' delegation in place. */
export async function placedOnCitus(sql: Sql | ReservedSql, schema: string): Promise<boolean> {
  const placed = await placement(sql, schema);
  return (
    placed.get("sessions") === "h" &&
    DISTRIBUTED.every((t) => placed.get(t) === "h") &&
    REFERENCE.every((t) => placed.get(t) === "n") &&
    (await delegatesOnCitus(sql, schema))
  );
}

/**
 * Whether `schema`'s sessions are distributed on a Citus cluster. Servers and workers then write
 * as a cluster needs (WriterOptions.citus). Refused when its writes cannot be delegated yet (a
 * cluster placed by an earlier release): `brain migrate --citus` completes it.
 */
export async function distributedOnCitus(sql: Sql, schema: string): Promise<boolean> {
  if (!(await citusInstalled(sql))) return false;
  if ((await placement(sql, schema)).get("sessions") !== "h") return false;
  if (!(await delegatesOnCitus(sql, schema))) {
    throw new Error("this Citus cluster's writes are not delegated yet: run `brain migrate --citus`");
  }
  return true;
}

/**
 * Places Brain's tables on the cluster (see DISTRIBUTED, REFERENCE), moving the rows an existing
 * install has into the shards. Idempotent, and resumable: each step looks at what is already done,
 * so a run cut short is finished by the next. Holds the migration lock of `schema` throughout, so
 * it never runs beside a migration. Returns whether it placed anything; on a cluster already
 * placed it only brings the writes' delegation function up to this release's.
 */
export async function placeOnCitus(sql: Sql, schema: string): Promise<boolean> {
  if (await placedOnCitus(sql, schema)) {
    await refreshDelegation(sql, schema);
    return false;
  }
  const conn = await sql.reserve();
  try {
    await conn`SELECT pg_advisory_lock(hashtextextended(${migrateLockKey(schema)}, 0))`;
    try {
      // Another migrator may have placed them while this one waited for the lock.
      if (await placedOnCitus(conn, schema)) return false;
      await conn.unsafe(`SET search_path TO ${quoteIdent(schema)}`);
      await conn`SET citus.multi_shard_modify_mode TO sequential`;
      await place(conn, schema);
    } finally {
      await conn`SELECT pg_advisory_unlock(hashtextextended(${migrateLockKey(schema)}, 0))`;
      await conn`RESET ALL`;
    }
  } finally {
    conn.release();
  }
  return true;
}

async function place(conn: ReservedSql, schema: string): Promise<void> {
  // Only those still there: Citus refuses any trigger statement on a table already distributed.
  const present = await conn<{ name: string }[]>`
    SELECT t.tgname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    WHERE c.relnamespace = to_regnamespace(${schema}) AND NOT t.tgisinternal`;
  const existing = new Set(present.map((r) => r.name));
  for (const { table, name } of TRIGGERS) {
    if (existing.has(name)) await conn.unsafe(`DROP TRIGGER ${name} ON ${table}`);
  }
  for (const { table, name } of KEYS) await conn.unsafe(`ALTER TABLE ${table} DROP CONSTRAINT IF EXISTS ${name}`);
  let placed = await placement(conn, schema);
  for (const table of REFERENCE) {
    if (!placed.has(table)) await conn`SELECT create_reference_table(${`${quoteIdent(schema)}.${table}`})`;
  }
  placed = await placement(conn, schema);
  const moved: string[] = [];
  for (const table of ["sessions", ...DISTRIBUTED]) {
    if (placed.has(table)) continue;
    await distribute(conn, schema, table);
    moved.push(table);
  }
  // The rows were copied into the shards; each local copy, no longer visible, is removed (once
  // nothing local references it).
  for (const table of moved) {
    await conn`SELECT truncate_local_data_after_distributing_table(${`${quoteIdent(schema)}.${table}`})`;
  }
  for (const { table, name, definition } of KEYS) {
    await conn.unsafe(`ALTER TABLE ${table} ADD CONSTRAINT ${name} ${definition}`);
  }
  await createDelegation(conn, schema);
}

/** Distributes `table` by session id, co-located with sessions; its rows are copied into the shards. */
async function distribute(conn: ReservedSql, schema: string, table: string): Promise<void> {
  const name = `${quoteIdent(schema)}.${table}`;
  if (table === "sessions") await conn`SELECT create_distributed_table(${name}, 'id')`;
  else
    await conn`SELECT create_distributed_table(${name}, 'session_id', colocate_with => ${`${quoteIdent(schema)}.sessions`})`;
}

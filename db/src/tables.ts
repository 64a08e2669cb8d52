import type { Helper, ReservedSql, Sql, TransactionSql } from "postgres";

/**
 * Brain's relations, each named with its schema. The SQL in this package qualifies every table,
 * view and function it uses, and depends on no `search_path`: a connection pooler in transaction
 * mode (PgBouncer, Supavisor, RDS Proxy) keeps no session state between transactions, and may
 * refuse `search_path` as a startup parameter.
 */
export const RELATIONS = [
  "activation_budgets",
  "app_tokens",
  "approvals",
  "calls",
  "component_uploads",
  "components",
  "drop_empty_journal_weeks",
  "drop_journal_partitions",
  "ensure_journal_partitions",
  "environments",
  "host_connections",
  "host_replicas",
  "hosts",
  "idempotency_keys",
  "journal",
  "mcp_tasks",
  "migrations",
  "model_calls",
  "records",
  "servers",
  "session_hosts",
  "session_secrets",
  "sessions",
  "tool_calls",
  "tool_model_calls",
  "trace_cursors",
  "workspace_files",
  "write_inputs",
  "writer_marks",
] as const;

export type Relation = (typeof RELATIONS)[number];
export type Tables = Readonly<Record<Relation, Helper<string, []>>>;

/**
 * A pool, a transaction or a reserved connection: each shows its pool's options object (for a
 * transaction or a reservation, a change of db/driver/postgres-3.4.9-fixes.patch), which stands for the pool.
 */
type AnySql = Sql | TransactionSql | ReservedSql;

function optionsOf(sql: AnySql): object {
  return (sql as unknown as { options: object }).options;
}

const schemas = new WeakMap<object, string>();
const cache = new Map<string, Tables>();

const distributed = new WeakSet<object>();

/**
 * Records that `sql`'s tables are distributed on a Citus cluster, for it and every transaction
 * or reservation of it: an append or a call transition run there is delegated whole to its
 * session's worker (ops/on-session-shards.ts), also when another write runs it inside its own.
 */
export function bindDistributed(sql: AnySql): void {
  distributed.add(optionsOf(sql));
}

/** Whether `sql` works on tables distributed on a Citus cluster (see bindDistributed). */
export function isDistributed(sql: AnySql): boolean {
  return distributed.has(optionsOf(sql));
}

/** Records that `sql` (and every transaction or reservation of it) works on `schema`. */
export function bindSchema(sql: AnySql, schema: string): void {
  schemas.set(optionsOf(sql), schema);
}

/** The schema `sql` was made for (see connect()). */
export function schemaOf(sql: AnySql): string {
  const schema = schemas.get(optionsOf(sql));
  if (schema === undefined) throw new Error("a pool made by connect() is needed: its schema is unknown");
  return schema;
}

/** Brain's relations in the schema of `sql`, for `${brain.sessions}` in a query. */
export function tables(sql: AnySql): Tables {
  const schema = schemaOf(sql);
  let t = cache.get(schema);
  if (!t) {
    // sql(name) is an identifier, "schema"."relation".
    t = Object.freeze(
      Object.fromEntries(RELATIONS.map((r) => [r, (sql as Sql)(`${schema}.${r}`)])),
    ) as unknown as Tables;
    cache.set(schema, t);
  }
  return t;
}

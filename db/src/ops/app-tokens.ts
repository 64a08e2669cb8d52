import type { Sql } from "postgres";
import { tables } from "../tables.js";
import type { TokenQuotas } from "./quotas.js";

export interface AppTokenRow {
  id: string;
  name: string;
  created_at: Date;
  revoked_at: Date | null;
  max_sessions: number | null;
  max_hosts: number | null;
  max_open_calls: number | null;
  max_component_bytes: string | null;
}

const COLUMNS = "id, name, created_at, revoked_at, max_sessions, max_hosts, max_open_calls, max_component_bytes";

/** Stores a new application token by its SHA-256; the token itself never reaches the database. */
export async function insertAppToken(
  sql: Sql,
  id: string,
  name: string,
  tokenHash: Buffer,
  quotas: Partial<TokenQuotas> = {},
): Promise<AppTokenRow> {
  const brain = tables(sql);
  const [row] = await sql<AppTokenRow[]>`
    INSERT INTO ${brain.app_tokens} (id, name, token_hash, max_sessions, max_hosts, max_open_calls, max_component_bytes)
    VALUES (${id}, ${name}, ${tokenHash}, ${quotas.sessions ?? null}, ${quotas.hosts ?? null},
            ${quotas.openCalls ?? null}, ${quotas.componentBytes ?? null})
    RETURNING ${sql.unsafe(COLUMNS)}`;
  return row!;
}

/** A token as listed, or null when there is none. */
export async function readAppToken(sql: Sql, id: string): Promise<AppTokenRow | null> {
  const brain = tables(sql);
  const [row] = await sql<AppTokenRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM ${brain.app_tokens} WHERE id = ${id}`;
  return row ?? null;
}

/**
 * The live token with this hash, or null (unknown or revoked). Read on every request, uncached, so
 * a revocation committed by any server refuses the token's next request everywhere.
 */
export async function activeAppTokenId(sql: Sql, tokenHash: Buffer): Promise<string | null> {
  const brain = tables(sql);
  const [row] = await sql<{ id: string }[]>`
    SELECT id FROM ${brain.app_tokens} WHERE token_hash = ${tokenHash} AND revoked_at IS NULL`;
  return row?.id ?? null;
}

/** Every token, revoked ones included (they still own sessions), newest first. */
export async function listAppTokens(sql: Sql): Promise<AppTokenRow[]> {
  const brain = tables(sql);
  return sql<AppTokenRow[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM ${brain.app_tokens} ORDER BY created_at DESC, id DESC`;
}

/** Revokes a token; revoking it again keeps the first revocation time. Null when there is none. */
export async function revokeAppToken(sql: Sql, id: string): Promise<AppTokenRow | null> {
  const brain = tables(sql);
  // Two statements, not coalesce(revoked_at, now()): a Citus cluster (where tokens are a
  // reference table) refuses a clock read inside COALESCE.
  const [row] = await sql<AppTokenRow[]>`
    UPDATE ${brain.app_tokens} SET revoked_at = now() WHERE id = ${id} AND revoked_at IS NULL
    RETURNING ${sql.unsafe(COLUMNS)}`;
  if (row) return row;
  const [revoked] = await sql<AppTokenRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM ${brain.app_tokens} WHERE id = ${id}`;
  return revoked ?? null;
}

/** Of these application tokens, the ones revoked. */
export async function revokedAmong(sql: Sql, ids: readonly string[]): Promise<Set<string>> {
  const brain = tables(sql);
  if (ids.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    SELECT id FROM ${brain.app_tokens} WHERE id = ANY(${sql.array([...ids])}::uuid[]) AND revoked_at IS NOT NULL`;
  return new Set(rows.map((r) => r.id));
}

/** The owning token of a session: undefined when there is no such session, null for the operator's. */
export async function sessionTokenId(sql: Sql, sessionId: string): Promise<string | null | undefined> {
  const brain = tables(sql);
  const [row] = await sql<
    { token_id: string | null }[]
  >`SELECT token_id FROM ${brain.sessions} WHERE id = ${sessionId}`;
  return row === undefined ? undefined : row.token_id;
}

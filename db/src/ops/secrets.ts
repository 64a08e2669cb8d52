import type { Sql, TransactionSql } from "postgres";
import type { Sealed } from "../secrets.js";
import { tables } from "../tables.js";

/** One sealed secret of a session, or null. Decrypting is the caller's (it holds the key). */
export async function readSecret(sql: Sql | TransactionSql, sessionId: string, name: string): Promise<Sealed | null> {
  const brain = tables(sql);
  const [row] = await sql<{ key_id: string; nonce: Buffer; ciphertext: Buffer; tag: Buffer }[]>`
    SELECT key_id, nonce, ciphertext, tag FROM ${brain.session_secrets} WHERE session_id = ${sessionId} AND name = ${name}`;
  return row ? { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag } : null;
}

/** The name a secret is stored under, which is also its authenticated data with the session id. */
export function secretAad(sessionId: string, name: string): string {
  return `${sessionId}/${name}`;
}

export const MODEL_SECRET = "model";
export function environmentSecret(name: string): string {
  return `environment:${name}`;
}
/** The headers of an MCP Environment (mcpServers), sealed like an HTTP Environment's. */
export function mcpSecret(name: string): string {
  return `mcp:${name}`;
}

/** A session's stored model configuration and its sealed key, in one read; null: no session. */
export async function readModel(
  sql: Sql | TransactionSql,
  sessionId: string,
): Promise<{ model: unknown; sealed: Sealed | null } | null> {
  const brain = tables(sql);
  const [row] = await sql<
    { model: unknown; key_id: string | null; nonce: Buffer | null; ciphertext: Buffer | null; tag: Buffer | null }[]
  >`
    SELECT s.model, k.key_id, k.nonce, k.ciphertext, k.tag
    FROM ${brain.sessions} s LEFT JOIN ${brain.session_secrets} k ON k.session_id = s.id AND k.name = ${MODEL_SECRET}
    WHERE s.id = ${sessionId}`;
  if (!row) return null;
  const sealed =
    row.key_id && row.nonce && row.ciphertext && row.tag
      ? { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext, tag: row.tag }
      : null;
  return { model: row.model, sealed };
}

import type { Sql, TransactionSql } from "postgres";
import type { Sealed } from "../secrets.js";

/** One sealed secret of a session, or null. Decrypting is the caller's (it holds the key). */
export async function readSecret(sql: Sql | TransactionSql, sessionId: string, name: string): Promise<Sealed | null> {
  const [row] = await sql<{ key_id: string; nonce: Buffer; ciphertext: Buffer; tag: Buffer }[]>`
    SELECT key_id, nonce, ciphertext, tag FROM session_secrets WHERE session_id = ${sessionId} AND name = ${name}`;
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

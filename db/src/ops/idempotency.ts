import { createHash } from "node:crypto";
import type { Sql, TransactionSql } from "postgres";
import { tables } from "../tables.js";

export function sha256(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

export type Remembered<T> = { kind: "new" } | { kind: "same"; response: T } | { kind: "conflict" };

/**
 * Idempotency: the key and the request are stored as hashes. Runs inside the caller's transaction,
 * before the write it protects; a concurrent request with the same key blocks on the unique index
 * until the first commits, then sees its answer.
 */
export async function recall<T>(
  tx: TransactionSql | Sql,
  scope: string,
  key: string,
  requestHash: Buffer,
): Promise<Remembered<T>> {
  const brain = tables(tx);
  const keyHash = sha256(key);
  const inserted = await tx`
    INSERT INTO ${brain.idempotency_keys} (scope, key_hash, request_hash, response)
    VALUES (${scope}, ${keyHash}, ${requestHash}, 'null'::jsonb)
    ON CONFLICT (scope, key_hash) DO NOTHING
    RETURNING 1`;
  if (inserted.length > 0) return { kind: "new" };
  const [row] = await tx<{ request_hash: Buffer; response: T }[]>`
    SELECT request_hash, response FROM ${brain.idempotency_keys} WHERE scope = ${scope} AND key_hash = ${keyHash}`;
  if (!row?.request_hash.equals(requestHash)) return { kind: "conflict" };
  return { kind: "same", response: row.response };
}

export async function remember(tx: TransactionSql | Sql, scope: string, key: string, response: unknown): Promise<void> {
  const brain = tables(tx);
  await tx`
    UPDATE ${brain.idempotency_keys} SET response = ${JSON.stringify(response)}::text::jsonb
    WHERE scope = ${scope} AND key_hash = ${sha256(key)}`;
}

import type { Sql } from "postgres";
import { againIfLost } from "../lost-race.js";
import { tables } from "../tables.js";
import { checkQuota } from "./quotas.js";

/**
 * A host, owned by the application token that registered it (null: the operator). `quota`: the
 * token's hosts quota applies (its own, else the fallback), checked in the same transaction.
 */
export async function insertHost(
  sql: Sql,
  id: string,
  name: string | null,
  tokenHash: Buffer,
  ownerTokenId: string | null = null,
  quota?: { fallback: number | null },
): Promise<void> {
  const brain = tables(sql);
  await sql.begin(async (tx) => {
    if (ownerTokenId && quota) await checkQuota(tx, ownerTokenId, "hosts", quota.fallback);
    await tx`INSERT INTO ${brain.hosts} (id, name, token_hash, token_id) VALUES (${id}, ${name}, ${tokenHash}, ${ownerTokenId})`;
  });
}

/**
 * The host's token hash and owning application token (null: the operator's host), or null when
 * there is no such host or its application token was revoked: revoking an application also
 * refuses its hosts' new connections.
 */
export async function hostAuth(sql: Sql, id: string): Promise<{ tokenHash: Buffer; tokenId: string | null } | null> {
  const brain = tables(sql);
  const [row] = await sql<{ token_hash: Buffer; token_id: string | null }[]>`
    SELECT h.token_hash, h.token_id FROM ${brain.hosts} h LEFT JOIN ${brain.app_tokens} t ON t.id = h.token_id
    WHERE h.id = ${id} AND t.revoked_at IS NULL`;
  return row ? { tokenHash: row.token_hash, tokenId: row.token_id } : null;
}

/**
 * Whether the host exists and the caller may place sessions on it: `owner` undefined is the
 * operator (any host), otherwise the host must have been registered with that application token.
 */
export async function hostExists(sql: Sql, id: string, owner?: string): Promise<boolean> {
  const brain = tables(sql);
  const [row] = await sql`
    SELECT 1 FROM ${brain.hosts} WHERE id = ${id} AND (${owner === undefined} OR token_id = ${owner ?? null}::uuid)`;
  return row !== undefined;
}

/**
 * A host's WebSocket, or (hostId null) a worker's own connection that its claimed calls run on.
 * Run again when it loses a deadlock (lost-race.ts): both tables are reference tables on Citus.
 */
export async function openConnection(sql: Sql, id: string, hostId: string | null, serverId: string): Promise<void> {
  const brain = tables(sql);
  await againIfLost(
    () => sql`
      WITH h AS (UPDATE ${brain.hosts} SET last_connected_at = now() WHERE id = ${hostId})
      INSERT INTO ${brain.host_connections} (id, host_id, server_id) VALUES (${id}, ${hostId}, ${serverId})`,
  );
}

export async function closeConnection(sql: Sql, id: string): Promise<void> {
  const brain = tables(sql);
  await againIfLost(
    () => sql`UPDATE ${brain.host_connections} SET closed_at = now() WHERE id = ${id} AND closed_at IS NULL`,
  );
}

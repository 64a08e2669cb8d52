import { randomUUID } from "node:crypto";
import { BrainError, servedDifferences, type ToolPlacement } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { type EndedCall, endCalls } from "./end-calls.js";
import { type Judgement, liveServer, NO_JUDGEMENT } from "./ownership.js";
import { checkQuota } from "./quotas.js";

/**
 * Named hosts: one host row per (owner, name), served by any number of replica connections. Every
 * write that must agree with the host's set of live replicas and active sessions (a session placed
 * in it, a replica connecting, a claim, a replica's socket closing) first locks the host's row, so
 * they happen one at a time per host and each sees what the previous one committed.
 */

/** The named host's id, created when missing, and locked for the rest of the transaction. */
export async function lockNamedHost(tx: TransactionSql, name: string, owner: string | null): Promise<string> {
  const brain = tables(tx);
  await tx`
    INSERT INTO ${brain.hosts} (id, name, token_hash, token_id, named)
    VALUES (${randomUUID()}, ${name}, NULL, ${owner}, true)
    ON CONFLICT ((COALESCE(token_id, '00000000-0000-0000-0000-000000000000'::uuid)), name) WHERE named
    DO NOTHING`;
  const [row] = await tx<{ id: string }[]>`
    SELECT id FROM ${brain.hosts}
    WHERE named AND name = ${name} AND token_id IS NOT DISTINCT FROM ${owner}::uuid
    FOR UPDATE`;
  return row!.id;
}

/** Contracts of the tools active sessions placed in the host (each distinct one once). */
async function advertisedIn(tx: TransactionSql, hostId: string): Promise<ToolPlacement[]> {
  const brain = tables(tx);
  const rows = await tx<{ t: ToolPlacement }[]>`
    SELECT DISTINCT jsonb_build_object('name', t->'name', 'env', t->'env',
           'inputSchema', t->'inputSchema', 'outputSchema', t->'outputSchema') AS t
    FROM ${brain.session_hosts} sh JOIN ${brain.sessions} s ON s.id = sh.session_id, jsonb_array_elements(s.tools) AS t
    WHERE sh.host_id = ${hostId} AND s.status = 'active'
      AND t->'env'->>'type' = 'host' AND t->'env'->>'name' = sh.env_name AND NOT (t->'env' ? 'url')`;
  return rows.map((r) => r.t);
}

/** The tools each live replica connection of the host serves (its server live as `judge` sees it). */
async function liveReplicaTools(tx: TransactionSql, hostId: string, judge: Judgement): Promise<ToolPlacement[][]> {
  const brain = tables(tx);
  const rows = await tx<{ tools: ToolPlacement[] }[]>`
    SELECT r.tools FROM ${brain.host_connections} hc
    JOIN ${brain.host_replicas} r ON r.id = hc.replica_id JOIN ${brain.servers} v ON v.id = hc.server_id
    WHERE hc.host_id = ${hostId} AND hc.closed_at IS NULL AND ${liveServer(tx, judge)}`;
  return rows.map((r) => r.tools);
}

function mismatch(what: string, differences: string[]): BrainError {
  return new BrainError("tool_mismatch", `${what}: ${differences.join("; ")}.`, differences);
}

/**
 * Inside a session's creation: locks each named host it places tools in (creating it when new) and
 * checks the session's tools there against the host's other active sessions (same name, same
 * contract) and against every live replica (each must serve them identically). Returns the hosts'
 * ids by environment name.
 */
export async function placeInNamedHosts(
  tx: TransactionSql,
  owner: string | null,
  byName: ReadonlyMap<string, ToolPlacement[]>,
  judge: Judgement = NO_JUDGEMENT,
): Promise<Map<string, string>> {
  const ids = new Map<string, string>();
  // A fixed order, so two sessions placing tools in the same hosts cannot deadlock.
  for (const name of [...byName.keys()].sort()) {
    const tools = byName.get(name)!;
    const hostId = await lockNamedHost(tx, name, owner);
    const names = new Set(tools.map((t) => t.name));
    const others = (await advertisedIn(tx, hostId)).filter((t) => names.has(t.name));
    const conflicts = servedDifferences(others, tools);
    if (conflicts.length > 0) {
      throw mismatch(`Named host ${JSON.stringify(name)} has sessions advertising other contracts`, conflicts);
    }
    for (const served of await liveReplicaTools(tx, hostId, judge)) {
      const lacking = servedDifferences(tools, served);
      if (lacking.length > 0) {
        throw mismatch(`A connected replica of named host ${JSON.stringify(name)} does not serve these tools`, lacking);
      }
    }
    ids.set(name, hostId);
  }
  return ids;
}

/** A replica of the named host `name` (created when new), owned like the host. */
export async function insertReplica(
  sql: Sql,
  r: { id: string; name: string; owner: string | null; tokenHash: Buffer; tools: ToolPlacement[] },
  /** The owner's hosts quota applies (replicas count as hosts): checked in the same transaction. */
  quota?: { fallback: number | null },
): Promise<string> {
  const brain = tables(sql);
  return sql.begin(async (tx) => {
    // The token's row first, then the host's: every writer of both takes them in this order.
    if (r.owner && quota) await checkQuota(tx, r.owner, "hosts", quota.fallback);
    const hostId = await lockNamedHost(tx, r.name, r.owner);
    await tx`
      INSERT INTO ${brain.host_replicas} (id, host_id, token_hash, tools)
      VALUES (${r.id}, ${hostId}, ${r.tokenHash}, ${JSON.stringify(r.tools)}::text::jsonb)`;
    return hostId;
  });
}

/**
 * A replica's token hash, host and owning application token (null: the operator's), or null when
 * unknown or its owner's token was revoked.
 */
export async function replicaAuth(
  sql: Sql,
  id: string,
): Promise<{ tokenHash: Buffer; hostId: string; tokenId: string | null } | null> {
  const brain = tables(sql);
  const [row] = await sql<{ token_hash: Buffer; host_id: string; token_id: string | null }[]>`
    SELECT r.token_hash, r.host_id, h.token_id FROM ${brain.host_replicas} r JOIN ${brain.hosts} h ON h.id = r.host_id
    LEFT JOIN ${brain.app_tokens} t ON t.id = h.token_id
    WHERE r.id = ${id} AND t.revoked_at IS NULL`;
  return row ? { tokenHash: row.token_hash, hostId: row.host_id, tokenId: row.token_id } : null;
}

/**
 * Opens a replica's connection row, after checking that the replica serves every tool that the
 * host's active sessions advertise, with identical contracts (`tool_mismatch` otherwise).
 */
export async function openReplicaConnection(
  sql: Sql,
  c: { id: string; replicaId: string; hostId: string; serverId: string },
): Promise<void> {
  const brain = tables(sql);
  await sql.begin(async (tx) => {
    await tx`SELECT 1 FROM ${brain.hosts} WHERE id = ${c.hostId} FOR UPDATE`;
    const [replica] = await tx<
      { tools: ToolPlacement[] }[]
    >`SELECT tools FROM ${brain.host_replicas} WHERE id = ${c.replicaId}`;
    const lacking = servedDifferences(await advertisedIn(tx, c.hostId), replica?.tools ?? []);
    if (lacking.length > 0) throw mismatch("This replica does not serve what the host's sessions advertise", lacking);
    await tx`
      INSERT INTO ${brain.host_connections} (id, host_id, server_id, replica_id)
      VALUES (${c.id}, ${c.hostId}, ${c.serverId}, ${c.replicaId})`;
  });
}

/**
 * A replica's socket closed: the connection stops counting as live and its open calls end
 * `unknown` (cause connection_lost), under the host lock, so no claim can hand it a call after.
 */
export function closeReplicaConnection(hostId: string, connectionId: string): WriteOp<EndedCall[]> {
  const lost = endCalls({ connectionId }, { status: "unknown", cause: "connection_lost" });
  return {
    exclusive: true,
    keys: (ended) => lost.keys(ended),
    run: async (tx) => {
      const brain = tables(tx);
      await tx`SELECT 1 FROM ${brain.hosts} WHERE id = ${hostId} FOR UPDATE`;
      await tx`UPDATE ${brain.host_connections} SET closed_at = now() WHERE id = ${connectionId} AND closed_at IS NULL`;
      return lost.run(tx);
    },
  };
}

/** The named hosts a session places tools in, by environment name. */
export async function sessionNamedHosts(sql: Sql, sessionId: string): Promise<Record<string, string>> {
  const brain = tables(sql);
  const rows = await sql<{ env_name: string; host_id: string }[]>`
    SELECT env_name, host_id FROM ${brain.session_hosts} WHERE session_id = ${sessionId}`;
  return Object.fromEntries(rows.map((r) => [r.env_name, r.host_id]));
}

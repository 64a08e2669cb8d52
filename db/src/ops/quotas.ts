import { BrainError } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import { tables } from "../tables.js";

/**
 * Quotas per application token (migration 0019): a count's ceiling, or null for the server's
 * default. Each check locks the token's row first, so checks of one token (and the writes they
 * guard) happen one at a time and none overshoots; other tokens never wait on it.
 */
export interface TokenQuotas {
  sessions: number | null;
  hosts: number | null;
  openCalls: number | null;
  componentBytes: number | null;
}

export type QuotaName = keyof TokenQuotas;

interface QuotaRow {
  max_sessions: number | null;
  max_hosts: number | null;
  max_open_calls: number | null;
  max_component_bytes: string | null;
}

function quotasOf(row: QuotaRow): TokenQuotas {
  return {
    sessions: row.max_sessions,
    hosts: row.max_hosts,
    openCalls: row.max_open_calls,
    componentBytes: row.max_component_bytes === null ? null : Number(row.max_component_bytes),
  };
}

/** A token's own quotas (null fields: the server's default); null when there is no such token. */
export async function readTokenQuotas(sql: Sql | TransactionSql, tokenId: string): Promise<TokenQuotas | null> {
  const brain = tables(sql);
  const [row] = await sql<QuotaRow[]>`
    SELECT max_sessions, max_hosts, max_open_calls, max_component_bytes FROM ${brain.app_tokens} WHERE id = ${tokenId}`;
  return row ? quotasOf(row) : null;
}

/** Replaces the quotas named in `quotas` (null: back to the default); false when there is no such token. */
export async function setTokenQuotas(sql: Sql, tokenId: string, quotas: Partial<TokenQuotas>): Promise<boolean> {
  const brain = tables(sql);
  const keep = (name: QuotaName) => !(name in quotas);
  const rows = await sql`
    UPDATE ${brain.app_tokens} SET
      max_sessions = CASE WHEN ${keep("sessions")} THEN max_sessions ELSE ${quotas.sessions ?? null}::integer END,
      max_hosts = CASE WHEN ${keep("hosts")} THEN max_hosts ELSE ${quotas.hosts ?? null}::integer END,
      max_open_calls = CASE WHEN ${keep("openCalls")} THEN max_open_calls ELSE ${quotas.openCalls ?? null}::integer END,
      max_component_bytes = CASE WHEN ${keep("componentBytes")} THEN max_component_bytes
                                 ELSE ${quotas.componentBytes ?? null}::bigint END
    WHERE id = ${tokenId}
    RETURNING 1`;
  return rows.length > 0;
}

/** Locks the token's row for the rest of the transaction; its quotas as stored. */
export async function lockTokenQuotas(tx: TransactionSql, tokenId: string): Promise<TokenQuotas | null> {
  const brain = tables(tx);
  const [row] = await tx<QuotaRow[]>`
    SELECT max_sessions, max_hosts, max_open_calls, max_component_bytes FROM ${brain.app_tokens}
    WHERE id = ${tokenId} FOR UPDATE`;
  return row ? quotasOf(row) : null;
}

/**
 * How much of one quota the token uses now, counted no further than `upTo` (a count past the
 * ceiling need not be exact). Component bytes are summed whole.
 */
export async function tokenUsage(
  sql: Sql | TransactionSql,
  tokenId: string,
  quota: QuotaName,
  upTo: number,
): Promise<number> {
  const [row] = await usageQuery(sql, tokenId, quota, upTo);
  return Number(row?.n ?? 0);
}

function usageQuery(sql: Sql | TransactionSql, tokenId: string, quota: QuotaName, upTo: number) {
  const brain = tables(sql);
  switch (quota) {
    case "sessions":
      return sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM (
          SELECT 1 FROM ${brain.sessions} WHERE token_id = ${tokenId} AND status = 'active' LIMIT ${upTo}) s`;
    case "hosts":
      // Registered hosts, and each replica of a named host (the named host's own row is neither).
      return sql<{ n: number }[]>`
        SELECT (SELECT count(*) FROM (SELECT 1 FROM ${brain.hosts} WHERE token_id = ${tokenId} AND NOT named LIMIT ${upTo}) h)
             + (SELECT count(*) FROM (SELECT 1 FROM ${brain.host_replicas} r JOIN ${brain.hosts} h ON h.id = r.host_id
                                      WHERE h.token_id = ${tokenId} LIMIT ${upTo}) r) AS n`;
    case "openCalls":
      return sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM (
          SELECT 1 FROM ${brain.sessions} s JOIN ${brain.calls} c ON c.session_id = s.id
          WHERE s.token_id = ${tokenId} AND s.status = 'active' AND c.state <> 'ended' LIMIT ${upTo}) c`;
    case "componentBytes":
      return sql<{ n: string }[]>`
        SELECT coalesce(sum(size), 0)::bigint AS n FROM ${brain.component_uploads} WHERE token_id = ${tokenId}`;
  }
}

/** Whether the token has already uploaded (and been charged for) this component. */
export async function chargedForComponent(
  sql: Sql | TransactionSql,
  tokenId: string,
  sha256: string,
): Promise<boolean> {
  const brain = tables(sql);
  const [row] = await sql`SELECT 1 FROM ${brain.component_uploads} WHERE token_id = ${tokenId} AND sha256 = ${sha256}`;
  return row !== undefined;
}

/** Charges the token for a component it uploaded (once). */
export async function chargeComponent(tx: Sql | TransactionSql, tokenId: string, sha256: string, size: number) {
  const brain = tables(tx);
  await tx`
    INSERT INTO ${brain.component_uploads} (token_id, sha256, size) VALUES (${tokenId}, ${sha256}, ${size})
    ON CONFLICT DO NOTHING`;
}

/**
 * Inside a write's transaction: locks the token's row and refuses (`quota_exceeded`) when `adding`
 * more would take it past its quota (its own, else `fallback`; neither: no limit).
 */
export async function checkQuota(
  tx: TransactionSql,
  tokenId: string,
  quota: QuotaName,
  fallback: number | null,
  adding = 1,
): Promise<void> {
  const stored = await lockTokenQuotas(tx, tokenId);
  const limit = stored?.[quota] ?? fallback;
  if (limit === null) return;
  const used = await tokenUsage(tx, tokenId, quota, limit + 1);
  if (used + adding > limit) throw quotaExceeded(quota, limit, used);
}

export function quotaExceeded(quota: QuotaName, limit: number, used: number): BrainError {
  return new BrainError(
    "quota_exceeded",
    `This application token's ${QUOTA_NAMES[quota]} quota is ${limit}; it has ${used}.`,
    { quota, limit, used },
  );
}

const QUOTA_NAMES: Record<QuotaName, string> = {
  sessions: "active sessions",
  hosts: "hosts",
  openCalls: "open calls",
  componentBytes: "component bytes",
};

import type { RecordPayload, ToolPlacement } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import type { Sealed } from "../secrets.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { type EndedCall, endCalls } from "./end-calls.js";
import { placeInNamedHosts } from "./named-hosts.js";
import type { Judgement } from "./ownership.js";
import { checkQuota } from "./quotas.js";
import { deleteSessionsIn, lockSession } from "./session-delete.js";

export interface SessionRow {
  id: string;
  status: "active" | "ended";
  host_id: string | null;
  model: unknown;
  tools: unknown[];
  metadata: Record<string, string>;
  last_seq: number;
  owner_id: string | null;
  owner_epoch: number;
  /** The application token that created it; null for the operator's sessions. */
  token_id: string | null;
  created_at: Date;
  ended_at: Date | null;
  /** A fork's source session and the last sequence copied from it. */
  forked_from?: string | null;
  forked_at?: number | null;
}

export interface NewSession {
  id: string;
  hostId: string | null;
  /** Provider configuration as stored: no secrets. */
  model: unknown;
  tools: unknown[];
  metadata: Record<string, string>;
  /** Initial workspace files: path → UTF-8 text. */
  workspace?: Record<string, string>;
  /** The creating application token; null or absent: the operator. */
  tokenId?: string | null;
  /** The creating server runs the session's loop first (fencing epoch 1). */
  ownerId: string;
  /** The session_created record's payload. */
  created: RecordPayload<"session_created">;
  /** Encrypted secrets (the provider key, Environment headers), by name. */
  secrets?: { name: string; sealed: Sealed }[];
  /** The session's HTTP Environments: public configuration only (header values are secrets). */
  environments?: { name: string; type: "http"; config: unknown }[];
  /** What ctx.environments may do; null or absent: nothing. */
  environmentControl?: unknown;
  /**
   * The session's tools by the named host (environment name) that serves them; `judge`: which
   * servers' replica connections count as live (server/src/liveness.ts).
   */
  namedHosts?: { byName: ReadonlyMap<string, ToolPlacement[]>; judge?: Judgement };
  /**
   * The creating token's active-sessions quota applies (its own, else `fallback`): checked, its
   * row locked, in the creation's own transaction (see checkQuota).
   */
  quota?: { fallback: number | null };
}

/** A sealed secret as JSON, for inserting with jsonb_to_recordset (bytea as base64). */
export function sealedRows(secrets: { name: string; sealed: Sealed }[]) {
  return secrets.map(({ name, sealed }) => ({
    name,
    key_id: sealed.keyId,
    nonce: sealed.nonce.toString("base64"),
    ciphertext: sealed.ciphertext.toString("base64"),
    tag: sealed.tag.toString("base64"),
  }));
}

/**
 * Inserts the session and its first record (seq 1, session_created) in one statement; a session
 * placing tools in named hosts first locks and checks those hosts (see placeInNamedHosts), in a
 * transaction of its own.
 */
export function createSession(s: NewSession): WriteOp<SessionRow> {
  const touched: CommitKeys = emptyKeys();
  touched.sessions.set(s.id, Touch.other);
  const insert = insertSession(s);
  const named = s.namedHosts;
  const quota = s.quota && s.tokenId ? { tokenId: s.tokenId, fallback: s.quota.fallback } : null;
  if ((!named || named.byName.size === 0) && !quota) return { notify: touched, keys: () => touched, run: insert };
  return {
    exclusive: true,
    keys: () => touched,
    run: async (tx) => {
      if (quota) await checkQuota(tx, quota.tokenId, "sessions", quota.fallback);
      if (!named || named.byName.size === 0) return insert(tx);
      const ids = await placeInNamedHosts(tx, s.tokenId ?? null, named.byName, named.judge);
      const row = await insert(tx);
      const pairs = [...ids].map(([env_name, host_id]) => ({ env_name, host_id }));
      await tx`
        INSERT INTO ${tables(tx).session_hosts} (session_id, env_name, host_id)
        SELECT ${s.id}, x.env_name, x.host_id
        FROM jsonb_to_recordset(${JSON.stringify(pairs)}::text::jsonb) AS x(env_name text, host_id uuid)`;
      return row;
    },
  };
}

function insertSession(s: NewSession): (tx: TransactionSql) => Promise<SessionRow> {
  return (tx) => {
    const brain = tables(tx);
    return tx<SessionRow[]>`
        WITH s AS (
          INSERT INTO ${brain.sessions} (id, host_id, model, tools, metadata, last_seq, owner_id, owner_epoch, environment_control, token_id)
          VALUES (${s.id}, ${s.hostId}, ${JSON.stringify(s.model)}::text::jsonb, ${JSON.stringify(s.tools)}::text::jsonb,
                  ${JSON.stringify(s.metadata)}::text::jsonb, 1, ${s.ownerId}, 1,
                  NULLIF(${JSON.stringify(s.environmentControl ?? null)}::text::jsonb, 'null'::jsonb), ${s.tokenId ?? null})
          RETURNING *
        ),
        r AS (
          INSERT INTO ${brain.records} (session_id, seq, kind, payload)
          SELECT id, 1, 'session_created', ${JSON.stringify(s.created)}::text::jsonb FROM s
        ),
        w AS (
          INSERT INTO ${brain.workspace_files} (session_id, path, content)
          SELECT s.id, f.key, convert_to(f.value, 'UTF8')
          FROM s, jsonb_each_text(${JSON.stringify(s.workspace ?? {})}::text::jsonb) AS f
        ),
        k AS (
          INSERT INTO ${brain.session_secrets} (session_id, name, key_id, nonce, ciphertext, tag)
          SELECT s.id, x.name, x.key_id, decode(x.nonce, 'base64'), decode(x.ciphertext, 'base64'), decode(x.tag, 'base64')
          FROM s, jsonb_to_recordset(${JSON.stringify(sealedRows(s.secrets ?? []))}::text::jsonb)
            AS x(name text, key_id text, nonce text, ciphertext text, tag text)
        ),
        e AS (
          INSERT INTO ${brain.environments} (session_id, name, type, config)
          SELECT s.id, x.name, x.type, x.config
          FROM s, jsonb_to_recordset(${JSON.stringify(s.environments ?? [])}::text::jsonb)
            AS x(name text, type text, config jsonb)
        )
        SELECT * FROM s`.then((rows) => rows[0]!);
  };
}

/** Status and last sequence only: cheap enough for hot paths (no model or tools columns). */
export async function sessionStatus(
  sql: Sql,
  id: string,
): Promise<{ status: "active" | "ended"; lastSeq: number } | null> {
  const brain = tables(sql);
  const [row] = await sql<{ status: "active" | "ended"; last_seq: number }[]>`
    SELECT status, last_seq FROM ${brain.sessions} WHERE id = ${id}`;
  return row ? { status: row.status, lastSeq: row.last_seq } : null;
}

export async function getSession(sql: Sql, id: string): Promise<SessionRow | null> {
  const brain = tables(sql);
  const [row] = await sql<SessionRow[]>`SELECT * FROM ${brain.sessions} WHERE id = ${id}`;
  return row ?? null;
}

/** A keyset position: creation time in whole microseconds (Postgres's precision) and id. */
export interface SessionCursor {
  us: string;
  id: string;
}

export interface SessionPage {
  rows: SessionRow[];
  next: SessionCursor | null;
}

/**
 * Newest first, keyset-paginated on (created_at, id), exact to the microsecond. With `owner`, only
 * that application token's sessions; without it (the operator), everyone's.
 */
export async function listSessions(
  sql: Sql,
  limit: number,
  after: SessionCursor | null,
  owner?: string,
): Promise<SessionPage> {
  const brain = tables(sql);
  const rows = await sql<(SessionRow & { created_us: string })[]>`
    SELECT *, (extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us FROM ${brain.sessions}
    WHERE (${after === null}
       OR (created_at, id) < ('epoch'::timestamptz + ${after?.us ?? "0"}::bigint * interval '1 microsecond',
                              ${after?.id ?? null}::uuid))
    -- Two statements, not one with an OR: each keeps a plan that uses its index.
    ${owner === undefined ? sql`` : sql`AND token_id = ${owner}`}
    ORDER BY created_at DESC, id DESC
    LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  const next = rows.length > limit && last ? { us: last.created_us, id: last.id } : null;
  return { rows: page, next };
}

export interface EndResult {
  ended: boolean;
  cancelled: EndedCall[];
  /** The session's host, told to release its handlers (through the commit's keys). */
  hostId: string | null;
}

/**
 * Ends a session: its open calls end `cancelled` (cause session_ended), then session_ended is
 * journaled and the session stops accepting messages. Ending twice is a no-op.
 */
export function endSession(id: string, reason: string): WriteOp<EndResult> {
  const cancel = endCalls({ sessionId: id }, { status: "cancelled", cause: "session_ended" });
  return {
    exclusive: true,
    keys: (r): CommitKeys => {
      const keys = cancel.keys(r.cancelled);
      if (r.ended) keys.sessions.set(id, (keys.sessions.get(id) ?? 0) | Touch.ended);
      if (r.hostId) keys.releases.set(id, r.hostId);
      return keys;
    },
    run: async (tx) => {
      const brain = tables(tx);
      // Calls first, then the session row: the order every other write takes these locks in.
      const cancelled = await cancel.run(tx);
      const [ended] = await tx<{ host_id: string | null }[]>`
        WITH s AS (
          UPDATE ${brain.sessions} SET status = 'ended', ended_at = now(), last_seq = last_seq + 1
          WHERE id = ${id} AND status = 'active' RETURNING last_seq, host_id
        ),
        r AS (
          INSERT INTO ${brain.records} (session_id, seq, kind, payload)
          SELECT ${id}, last_seq, 'session_ended', ${JSON.stringify({ reason })}::text::jsonb FROM s
        )
        SELECT host_id FROM s`;
      return { ended: ended !== undefined, cancelled, hostId: ended?.host_id ?? null };
    },
  };
}

/** Deletes a session and its journal. Open calls are reported so their hosts can be told. */
export function deleteSession(id: string): WriteOp<{ deleted: boolean; open: EndedCall[]; hostId: string | null }> {
  const cancel = endCalls({ sessionId: id }, { status: "cancelled", cause: "session_ended" });
  return {
    exclusive: true,
    keys: (r): CommitKeys => {
      const keys = emptyKeys();
      if (r.deleted) keys.sessions.set(id, Touch.ended);
      if (r.hostId) keys.releases.set(id, r.hostId);
      return keys;
    },
    run: async (tx) => {
      // The session row first (session-delete.ts): once it is held, no write can add a row under
      // the session (each takes that row's lock first, or waits for it and finds it gone). Then
      // the open calls are cancelled, and the session and everything under it deleted.
      if (!(await lockSession(tx, id))) return { deleted: false, open: [], hostId: null };
      const open = await cancel.run(tx);
      const rows = await deleteSessionsIn(tx, [id]);
      return { deleted: rows.length > 0, open, hostId: rows[0]?.host_id ?? null };
    },
  };
}

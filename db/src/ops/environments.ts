/**
 * A session's HTTP Environments: reads, and the changes ctx.environments makes (each in the same
 * transaction as its `environment_operation` record, see environment-operation.ts). Header values
 * are secrets: only their sealed form (session_secrets, `environment:<name>`) is read or written.
 */
import type { Sql, TransactionSql } from "postgres";
import type { Sealed } from "../secrets.js";
import { tables } from "../tables.js";
import { environmentSecret } from "./secrets.js";

export type EnvironmentStatus = "new" | "ready" | "failed";

/** The public configuration an Environment row keeps (header names, never values). */
export interface EnvironmentConfig {
  baseUrl: string;
  headerNames: string[];
  setup?: { method: string; path: string; body?: unknown } | null;
  /** `model`: invocations may call the session's model through Brain (the granted service). */
  grants?: { model?: boolean };
}

export interface EnvironmentRow {
  name: string;
  type: "http";
  config: EnvironmentConfig;
  /** An Environment without a setup request is always ready. */
  status: EnvironmentStatus;
  setupError: string | null;
  /** Its configuration's revision: a setup only records its result for the configuration it ran. */
  version: string;
}

/** A row and its sealed headers (null: no headers). */
export interface StoredEnvironment {
  row: EnvironmentRow;
  headers: Sealed | null;
}

type Db = Sql | TransactionSql;

export interface RawRow {
  name: string;
  type: "http";
  config: EnvironmentConfig;
  status: EnvironmentStatus;
  setup_error: string | null;
  version: string;
}

export function toRow(r: RawRow): EnvironmentRow {
  const hasSetup = r.config.setup !== undefined && r.config.setup !== null;
  return {
    name: r.name,
    type: r.type,
    config: r.config,
    status: hasSetup ? r.status : "ready",
    setupError: hasSetup ? r.setup_error : null,
    version: r.version,
  };
}

export async function listEnvironments(sql: Db, sessionId: string): Promise<EnvironmentRow[]> {
  const brain = tables(sql);
  const rows = await sql<RawRow[]>`
    SELECT e.name, e.type, e.config, e.status, e.setup_error, e.revision::text AS version FROM ${brain.environments} e WHERE e.session_id = ${sessionId} ORDER BY e.name`;
  return rows.map(toRow);
}

/** One Environment with its sealed headers, or null. */
export async function readEnvironment(sql: Db, sessionId: string, name: string): Promise<StoredEnvironment | null> {
  const brain = tables(sql);
  const [r] = await sql<(RawRow & { key_id: string | null; nonce: Buffer; ciphertext: Buffer; tag: Buffer })[]>`
    SELECT e.name, e.type, e.config, e.status, e.setup_error, e.revision::text AS version, k.key_id, k.nonce, k.ciphertext, k.tag
    FROM ${brain.environments} e
    LEFT JOIN ${brain.session_secrets} k ON k.session_id = e.session_id AND k.name = ${environmentSecret(name)}
    WHERE e.session_id = ${sessionId} AND e.name = ${name}`;
  if (!r) return null;
  const headers = r.key_id === null ? null : { keyId: r.key_id, nonce: r.nonce, ciphertext: r.ciphertext, tag: r.tag };
  return { row: toRow(r), headers };
}

/** What an Environment operation of a tool call needs to know about the call and its session. */
export interface EnvironmentCallContext {
  /** The call's state: running / returned are open. */
  state: string;
  activationSeq: number;
  /** Epoch ms, or null for unlimited. */
  deadline: number | null;
  /** sessions.environment_control, or null. */
  control: unknown;
  /** The Environment bindings of the session's placements. */
  bindings: { name: string; type: string }[];
  /** What the call's activation has emitted so far. */
  emittedBytes: number;
}

/** The call as dispatched to this host, or null when it has no such call. */
export async function environmentCallContext(
  sql: Sql,
  sessionId: string,
  seq: number,
  hostId: string,
): Promise<EnvironmentCallContext | null> {
  const brain = tables(sql);
  const [r] = await sql<
    {
      state: string;
      activation_seq: number;
      deadline: number | null;
      control: unknown;
      bindings: { name: string; type: string }[] | null;
      emitted: number | null;
    }[]
  >`
    SELECT c.state, c.activation_seq, (extract(epoch FROM c.deadline_at) * 1000)::float8 AS deadline,
           s.environment_control AS control,
           (SELECT jsonb_agg(DISTINCT jsonb_build_object('name', t->'env'->>'name', 'type', t->'env'->>'type'))
              FROM jsonb_array_elements(s.tools) AS t) AS bindings,
           (SELECT b.emitted_bytes FROM ${brain.activation_budgets} b
             WHERE b.session_id = c.session_id AND b.activation_seq = c.activation_seq) AS emitted
    FROM ${brain.calls} c JOIN ${brain.sessions} s ON s.id = c.session_id
    WHERE c.session_id = ${sessionId} AND c.seq = ${seq} AND c.host_id = ${hostId}`;
  if (!r) return null;
  return {
    state: r.state,
    activationSeq: r.activation_seq,
    deadline: r.deadline,
    control: r.control,
    bindings: r.bindings ?? [],
    emittedBytes: Number(r.emitted ?? 0),
  };
}

/** How many Environments a session may hold (what session creation accepts, too). */
export const MAX_SESSION_ENVIRONMENTS = 64;

export interface NewEnvironment {
  name: string;
  config: EnvironmentConfig;
  headers: Sealed | null;
}

/** Inserts an Environment and its sealed headers, unless the name is taken or the session is full. */
export async function insertEnvironment(
  tx: TransactionSql,
  sessionId: string,
  env: NewEnvironment,
): Promise<"created" | "exists" | "full"> {
  const brain = tables(tx);
  const [taken] = await tx`SELECT 1 FROM ${brain.environments} WHERE session_id = ${sessionId} AND name = ${env.name}`;
  if (taken) return "exists";
  const [count] = await tx<{ n: number }[]>`
    SELECT count(*)::int AS n FROM ${brain.environments} WHERE session_id = ${sessionId}`;
  if ((count?.n ?? 0) >= MAX_SESSION_ENVIRONMENTS) return "full";
  const status: EnvironmentStatus = env.config.setup ? "new" : "ready";
  const inserted = await tx`
    INSERT INTO ${brain.environments} (session_id, name, type, config, status)
    VALUES (${sessionId}, ${env.name}, 'http', ${JSON.stringify(env.config)}::text::jsonb, ${status})
    ON CONFLICT (session_id, name) DO NOTHING RETURNING 1`;
  if (inserted.length === 0) return "exists";
  await writeHeaders(tx, sessionId, env.name, env.headers);
  return "created";
}

/** The row, locked for a change in this transaction; null when there is none. */
export async function lockEnvironment(
  tx: TransactionSql,
  sessionId: string,
  name: string,
): Promise<StoredEnvironment | null> {
  const brain = tables(tx);
  await tx`SELECT 1 FROM ${brain.environments} WHERE session_id = ${sessionId} AND name = ${name} FOR UPDATE`;
  return readEnvironment(tx, sessionId, name);
}

/**
 * Replaces an Environment's configuration (and its headers, unless `headers` is undefined; null
 * removes them). A changed Environment must be set up again: its status goes back to `new`.
 */
export async function replaceEnvironment(
  tx: TransactionSql,
  sessionId: string,
  name: string,
  config: EnvironmentConfig,
  headers: Sealed | null | undefined,
): Promise<void> {
  const brain = tables(tx);
  await tx`
    UPDATE ${brain.environments} SET config = ${JSON.stringify(config)}::text::jsonb, status = 'new', setup_error = NULL,
           revision = revision + 1, updated_at = now()
    WHERE session_id = ${sessionId} AND name = ${name}`;
  if (headers !== undefined) await writeHeaders(tx, sessionId, name, headers);
}

/** Removes an Environment and its sealed headers; false when there was none. */
export async function deleteEnvironment(tx: TransactionSql, sessionId: string, name: string): Promise<boolean> {
  const brain = tables(tx);
  const rows =
    await tx`DELETE FROM ${brain.environments} WHERE session_id = ${sessionId} AND name = ${name} RETURNING 1`;
  await tx`DELETE FROM ${brain.session_secrets} WHERE session_id = ${sessionId} AND name = ${environmentSecret(name)}`;
  return rows.length > 0;
}

async function writeHeaders(tx: TransactionSql, sessionId: string, name: string, headers: Sealed | null) {
  const brain = tables(tx);
  const secret = environmentSecret(name);
  if (headers === null) {
    await tx`DELETE FROM ${brain.session_secrets} WHERE session_id = ${sessionId} AND name = ${secret}`;
    return;
  }
  await tx`
    INSERT INTO ${brain.session_secrets} (session_id, name, key_id, nonce, ciphertext, tag)
    VALUES (${sessionId}, ${secret}, ${headers.keyId}, ${headers.nonce}, ${headers.ciphertext}, ${headers.tag})
    ON CONFLICT (session_id, name) DO UPDATE
      SET key_id = excluded.key_id, nonce = excluded.nonce, ciphertext = excluded.ciphertext, tag = excluded.tag`;
}

import { BrainError, type RecordPayload } from "@aexhq/brain-contracts";
import type { Sql, TransactionSql } from "postgres";
import { type CommitKeys, emptyKeys, Touch } from "../commit-keys.js";
import type { Sealed } from "../secrets.js";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import { checkQuota } from "./quotas.js";
import { type SessionRow, sealedRows } from "./sessions.js";

/** Every secret of a session, sealed as stored (a fork re-seals them for its own id). */
export async function sessionSecrets(sql: Sql, sessionId: string): Promise<{ name: string; sealed: Sealed }[]> {
  const brain = tables(sql);
  const rows = await sql<{ name: string; key_id: string; nonce: Buffer; ciphertext: Buffer; tag: Buffer }[]>`
    SELECT name, key_id, nonce, ciphertext, tag FROM ${brain.session_secrets} WHERE session_id = ${sessionId}`;
  return rows.map((r) => ({
    name: r.name,
    sealed: { keyId: r.key_id, nonce: r.nonce, ciphertext: r.ciphertext, tag: r.tag },
  }));
}

export interface ForkSpec {
  source: string;
  id: string;
  /** The last record of the source the fork keeps. */
  at: number;
  /** The server creating it, which owns it first. */
  ownerId: string;
  /** sessions.model of the fork when another model was asked for; null keeps the source's. */
  model: unknown;
  /** The fork's session_created (its seq 1): the source's, naming the source and `at`. */
  created: RecordPayload<"session_created">;
  /** The source's secrets, re-sealed for the fork's id (and its model's key when replaced). */
  secrets: { name: string; sealed: Sealed }[];
  /** What closes what was open at `at`, appended after it. */
  closing: { kind: string; payload: unknown }[];
  /** Tool calls open at `at`: their rows end with `closedOutcome`. */
  openCalls: number[];
  closedOutcome: unknown;
  /** The creating token's active-sessions quota applies (see checkQuota), as to any new session. */
  quota?: { tokenId: string; fallback: number | null };
}

/**
 * Creates a session from another's journal up to `at`, in one transaction: its row (the source's
 * tools, host, metadata and environment control; lineage in forked_from and forked_at), records 2
 * to `at` copied as they are (with their times) after its own session_created, the closing records,
 * the calls up to `at` (all ended), the activations' budgets, Environments, named-host placements,
 * workspace files and secrets. Refused when `at` is past the source's end.
 */
export function forkSession(f: ForkSpec): WriteOp<SessionRow> {
  const keys: CommitKeys = emptyKeys();
  keys.sessions.set(f.id, Touch.other);
  return {
    exclusive: true,
    keys: () => keys,
    run: async (tx) => {
      const brain = tables(tx);
      const [source] = await tx<{ last_seq: number }[]>`
        SELECT last_seq FROM ${brain.sessions} WHERE id = ${f.source} FOR SHARE`;
      if (!source) throw new BrainError("not_found");
      if (f.at > Number(source.last_seq)) {
        throw new BrainError("invalid_request", `The session's journal ends at ${source.last_seq}.`);
      }
      if (f.quota) await checkQuota(tx, f.quota.tokenId, "sessions", f.quota.fallback);
      const row = await insertFork(tx, f);
      await copyJournal(tx, f);
      await copyState(tx, f);
      return row;
    },
  };
}

async function insertFork(tx: TransactionSql, f: ForkSpec): Promise<SessionRow> {
  const brain = tables(tx);
  const model = f.model === null ? null : JSON.stringify(f.model);
  const [row] = await tx<SessionRow[]>`
    INSERT INTO ${brain.sessions} (id, status, host_id, model, tools, metadata, last_seq, owner_id, owner_epoch,
                                   environment_control, token_id, forked_from, forked_at)
    SELECT ${f.id}, 'active', host_id, COALESCE(${model}::text::jsonb, model), tools, metadata,
           ${f.at + f.closing.length}, ${f.ownerId}, 1, environment_control, token_id, id, ${f.at}
    FROM ${brain.sessions} WHERE id = ${f.source}
    RETURNING *`;
  return row!;
}

async function copyJournal(tx: TransactionSql, f: ForkSpec): Promise<void> {
  const brain = tables(tx);
  await tx`
    INSERT INTO ${brain.records} (session_id, seq, kind, payload)
    VALUES (${f.id}, 1, 'session_created', ${JSON.stringify(f.created)}::text::jsonb)`;
  await tx`
    INSERT INTO ${brain.records} (session_id, seq, kind, payload, created_at)
    SELECT ${f.id}, seq, kind, payload, created_at FROM ${brain.records}
    WHERE session_id = ${f.source} AND seq BETWEEN 2 AND ${f.at}`;
  await tx`
    INSERT INTO ${brain.records} (session_id, seq, kind, payload)
    SELECT ${f.id}, ${f.at} + e.ord, e.v->>'kind', e.v->'payload'
    FROM jsonb_array_elements(${JSON.stringify(f.closing)}::text::jsonb) WITH ORDINALITY AS e(v, ord)`;
}

async function copyState(tx: TransactionSql, f: ForkSpec): Promise<void> {
  const brain = tables(tx);
  const open = tx.array(f.openCalls);
  const closed = JSON.stringify(f.closedOutcome);
  await tx`
    INSERT INTO ${brain.calls} (session_id, seq, tool, activation_seq, host_id, connection_id, state, outcome,
                                deadline_at, started_at, dispatched_at, returned_at, ended_at, executor, origin,
                                emissions_refused)
    SELECT ${f.id}, seq, tool, activation_seq, host_id, NULL, 'ended',
           CASE WHEN seq = ANY(${open}::bigint[]) THEN ${closed}::text::jsonb ELSE outcome END,
           deadline_at, started_at, dispatched_at, returned_at,
           CASE WHEN seq = ANY(${open}::bigint[]) THEN clock_timestamp() ELSE COALESCE(ended_at, clock_timestamp()) END,
           executor, origin, emissions_refused
    FROM ${brain.calls} WHERE session_id = ${f.source} AND seq <= ${f.at}`;
  await tx`
    INSERT INTO ${brain.activation_budgets} (session_id, activation_seq, emitted_bytes, model_calls)
    SELECT ${f.id}, activation_seq, emitted_bytes, model_calls FROM ${brain.activation_budgets}
    WHERE session_id = ${f.source} AND activation_seq <= ${f.at}`;
  await tx`
    INSERT INTO ${brain.environments} (session_id, name, type, config)
    SELECT ${f.id}, name, type, config FROM ${brain.environments} WHERE session_id = ${f.source}`;
  await tx`
    INSERT INTO ${brain.session_hosts} (session_id, env_name, host_id)
    SELECT ${f.id}, env_name, host_id FROM ${brain.session_hosts} WHERE session_id = ${f.source}`;
  await tx`
    INSERT INTO ${brain.workspace_files} (session_id, path, content)
    SELECT ${f.id}, path, content FROM ${brain.workspace_files} WHERE session_id = ${f.source}`;
  await tx`
    INSERT INTO ${brain.session_secrets} (session_id, name, key_id, nonce, ciphertext, tag)
    SELECT ${f.id}, x.name, x.key_id, decode(x.nonce, 'base64'), decode(x.ciphertext, 'base64'), decode(x.tag, 'base64')
    FROM jsonb_to_recordset(${JSON.stringify(sealedRows(f.secrets))}::text::jsonb)
      AS x(name text, key_id text, nonce text, ciphertext text, tag text)`;
}

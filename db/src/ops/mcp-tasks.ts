import type { PendingQuery, Row, Sql } from "postgres";
import { tables } from "../tables.js";
import type { WriteOp } from "../writer/index.js";
import type { AppendResult } from "./append.js";

/**
 * Brain as an MCP server. An MCP tool call is an ordinary Brain tool call that an MCP client
 * started; its answer is the journal's, so any server reads the same one:
 *
 * - the call's first `tool_result` (a return's value, an emitResult or a finish's value), or
 * - its `tool_call_ended`, when it ended without publishing a result (timeout, cancelled,
 *   unknown, a Brain-made error, a finish without a value).
 *
 * The first of those records never changes once written, so neither does a task's terminal status.
 */

/** The journal record that answers an MCP call. */
export interface CallAnswer {
  seq: number;
  kind: "tool_result" | "tool_call_ended";
  outcome: { status: string; [key: string]: unknown };
  content?: string;
  at: Date;
}

/** Where an MCP call stands: its state in `calls`, and its answer once written. */
export interface McpCallState {
  state: "pending" | "running" | "returned" | "ended";
  answer: CallAnswer | null;
}

export interface McpTaskRow extends McpCallState {
  id: string;
  seq: number;
  /** Null: kept with its session. */
  ttlMs: number | null;
  pollIntervalMs: number;
  createdAt: Date;
}

/** What a new task row records besides its call (filled in from the append). */
export interface NewMcpTask {
  id: string;
  /** The creating principal: an application token, or null for the operator. */
  tokenId: string | null;
  ttlMs: number | null;
  pollIntervalMs: number;
}

interface AnswerColumns {
  state: McpCallState["state"];
  answer_seq: number | null;
  answer_kind: CallAnswer["kind"] | null;
  answer_payload: { outcome?: CallAnswer["outcome"]; content?: unknown } | null;
  answer_at: Date | null;
}

const NO_OWNER = "00000000-0000-0000-0000-000000000000";

/**
 * The lateral join finding a call's answer. It reads the journal only once the call row says
 * something was published or it ended (a one-time filter), so polling a working call costs one
 * primary-key lookup; the scan after that stops at the first match.
 */
function answerOf(sql: Sql): PendingQuery<Row[]> {
  const brain = tables(sql);
  return sql`
    LEFT JOIN LATERAL (
      SELECT r.seq, r.kind, r.payload, r.created_at FROM ${brain.records} r
      WHERE (c.state = 'ended' OR c.outcome IS NOT NULL)
        AND r.session_id = c.session_id AND r.seq > c.seq
        AND r.kind IN ('tool_result', 'tool_call_ended') AND (r.payload->>'call')::bigint = c.seq
      ORDER BY r.seq LIMIT 1
    ) a ON true`;
}

function callState(row: AnswerColumns): McpCallState {
  if (row.answer_seq === null || row.answer_kind === null || !row.answer_payload?.outcome) {
    return { state: row.state, answer: null };
  }
  const answer: CallAnswer = {
    seq: row.answer_seq,
    kind: row.answer_kind,
    outcome: row.answer_payload.outcome,
    at: row.answer_at ?? new Date(),
  };
  if (typeof row.answer_payload.content === "string") answer.content = row.answer_payload.content;
  return { state: row.state, answer };
}

/** An MCP call's state and answer; null when the session has no such call. */
export async function mcpCallState(sql: Sql, sessionId: string, seq: number): Promise<McpCallState | null> {
  const brain = tables(sql);
  const [row] = await sql<AnswerColumns[]>`
    SELECT c.state, a.seq AS answer_seq, a.kind AS answer_kind, a.payload AS answer_payload, a.created_at AS answer_at
    FROM ${brain.calls} c ${answerOf(sql)}
    WHERE c.session_id = ${sessionId} AND c.seq = ${seq}`;
  return row ? callState(row) : null;
}

/**
 * `op` (the append of one tool_call_started), plus the task row naming the call it wrote, in the
 * same transaction: a task exists if and only if its call does.
 */
export function withMcpTask(sessionId: string, task: NewMcpTask, op: WriteOp<AppendResult>): WriteOp<AppendResult> {
  return {
    keys: op.keys,
    exclusive: op.exclusive,
    run: (tx) =>
      op.run(tx).then(async (result) => {
        const call = result.records.find((r) => r.kind === "tool_call_started");
        if (call) {
          await tx`
            INSERT INTO ${tables(tx).mcp_tasks} (id, session_id, seq, token_id, ttl_ms, poll_interval_ms)
            VALUES (${task.id}, ${sessionId}, ${call.seq}, ${task.tokenId}, ${task.ttlMs}, ${task.pollIntervalMs})`;
        }
        return result;
      }),
  };
}

interface TaskColumns extends AnswerColumns {
  id: string;
  seq: number;
  ttl_ms: number | null;
  poll_interval_ms: number;
  created_at: Date;
}

function taskRow(row: TaskColumns): McpTaskRow {
  return {
    ...callState(row),
    id: row.id,
    seq: row.seq,
    ttlMs: row.ttl_ms === null ? null : Number(row.ttl_ms),
    pollIntervalMs: row.poll_interval_ms,
    createdAt: row.created_at,
  };
}

function selectTasks(sql: Sql, sessionId: string, tokenId: string | null): PendingQuery<TaskColumns[]> {
  const brain = tables(sql);
  return sql<TaskColumns[]>`
    SELECT t.id, t.seq, t.ttl_ms, t.poll_interval_ms, t.created_at, c.state,
           a.seq AS answer_seq, a.kind AS answer_kind, a.payload AS answer_payload, a.created_at AS answer_at
    FROM ${brain.mcp_tasks} t
    JOIN ${brain.calls} c ON c.session_id = t.session_id AND c.seq = t.seq
    ${answerOf(sql)}
    WHERE t.session_id = ${sessionId}
      AND COALESCE(t.token_id, ${NO_OWNER}::uuid) = COALESCE(${tokenId}::uuid, ${NO_OWNER}::uuid)
      AND (t.ttl_ms IS NULL OR t.created_at + make_interval(secs => t.ttl_ms / 1000.0) > clock_timestamp())`;
}

/**
 * One task of a session as its creating principal sees it; null when it does not exist, belongs
 * to another principal or session, or outlived its ttl (all alike: nothing tells them apart).
 */
export async function getMcpTask(
  sql: Sql,
  sessionId: string,
  tokenId: string | null,
  taskId: string,
): Promise<McpTaskRow | null> {
  const [row] = await sql<TaskColumns[]>`${selectTasks(sql, sessionId, tokenId)} AND t.id = ${taskId}`;
  return row ? taskRow(row) : null;
}

/** A principal's tasks of a session in creation order, after the call `afterSeq`. */
export async function listMcpTasks(
  sql: Sql,
  sessionId: string,
  tokenId: string | null,
  afterSeq: number,
  limit: number,
): Promise<McpTaskRow[]> {
  const rows = await sql<TaskColumns[]>`
    ${selectTasks(sql, sessionId, tokenId)} AND t.seq > ${afterSeq} ORDER BY t.seq LIMIT ${limit}`;
  return rows.map(taskRow);
}

/** What an MCP request needs of its session, in one query; null when it does not exist. */
export interface McpSession {
  status: "active" | "ended";
  hostId: string | null;
  tools: unknown[];
  /** The session's caller deadline (epoch ms) from session_created, or null. */
  deadline: number | null;
  /** The application token that owns it (null: the operator). */
  tokenId: string | null;
}

export async function mcpSession(sql: Sql, sessionId: string): Promise<McpSession | null> {
  const brain = tables(sql);
  const [row] = await sql<
    {
      status: "active" | "ended";
      host_id: string | null;
      tools: unknown[];
      deadline: number | null;
      token_id: string | null;
    }[]
  >`
    SELECT s.status, s.host_id, s.tools, (r.payload->>'deadline')::float8 AS deadline, s.token_id
    FROM ${brain.sessions} s
    LEFT JOIN ${brain.records} r ON r.session_id = s.id AND r.seq = 1 AND r.kind = 'session_created'
    WHERE s.id = ${sessionId}`;
  if (!row) return null;
  return { status: row.status, hostId: row.host_id, tools: row.tools, deadline: row.deadline, tokenId: row.token_id };
}

import { randomUUID } from "node:crypto";
import { getMcpTask, listMcpTasks, type McpTaskRow } from "@aexhq/brain-db/ops";
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/interfaces.js";
import { ErrorCode, McpError, type Request, type Result, type Task } from "@modelcontextprotocol/sdk/types.js";
import { callToolResult, mcpTask } from "./answers.js";
import { cancelMcpCall, type McpCallDeps, type McpScope, startMcpCall } from "./calls.js";
import { toMcpError } from "./errors.js";

/** How often a client should poll a task (tasks/get); results arrive at once through tasks/result. */
export const TASK_POLL_INTERVAL_MS = 1000;
/** A task's lifetime when the client asks for none, and the most it may ask for. */
export const DEFAULT_TASK_TTL_MS = 24 * 60 * 60 * 1000;
export const MAX_TASK_TTL_MS = 30 * 24 * 60 * 60 * 1000;
/** tasks/list pages. */
const PAGE = 100;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function notFound(): McpError {
  return new McpError(ErrorCode.InvalidParams, "Failed to retrieve task: Task not found", { code: "not_found" });
}

/** Opaque to clients (as MCP asks): the last call sequence of the page, encoded. */
function encodeCursor(seq: number): string {
  return Buffer.from(`seq:${seq}`).toString("base64url");
}

function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const match = /^seq:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw new McpError(ErrorCode.InvalidParams, "Invalid cursor", { code: "invalid_request" });
  return Number(match[1]);
}

/**
 * The MCP SDK's TaskStore, kept in Postgres: a task is a Brain tool call (see mcp-tasks.ts in
 * the db package) and everything about it is read from the journal, so any server answers for it
 * and it survives the one that created it. One store serves one request: it is bound to the
 * session and the principal that asks, and another principal's task does not exist for it.
 */
export class JournalTaskStore implements TaskStore {
  constructor(
    private readonly rt: McpCallDeps,
    private readonly scope: McpScope,
  ) {}

  /** Starts the call a task-augmented tools/call asks for, with its task row, in one commit. */
  async createTask(params: CreateTaskOptions, _requestId: unknown, request: Request): Promise<Task> {
    const { name, arguments: args } = (request.params ?? {}) as { name?: string; arguments?: Record<string, unknown> };
    const requested = params.ttl ?? DEFAULT_TASK_TTL_MS;
    const task = {
      id: randomUUID(),
      tokenId: this.scope.tokenId,
      ttlMs: Math.min(Math.max(Math.floor(requested), 1000), MAX_TASK_TTL_MS),
      pollIntervalMs: TASK_POLL_INTERVAL_MS,
    };
    try {
      await startMcpCall(this.rt, this.scope, String(name), args ?? {}, task);
      return mcpTask(await this.require(task.id));
    } catch (error) {
      throw toMcpError(error);
    }
  }

  /** The task row as this principal sees it, or null (absent, another's, expired: all alike). */
  async row(taskId: string): Promise<McpTaskRow | null> {
    if (!UUID.test(taskId)) return null;
    try {
      return await getMcpTask(this.rt.sql, this.scope.sessionId, this.scope.tokenId, taskId);
    } catch (error) {
      throw toMcpError(error);
    }
  }

  async require(taskId: string): Promise<McpTaskRow> {
    const row = await this.row(taskId);
    if (!row) throw notFound();
    return row;
  }

  async getTask(taskId: string): Promise<Task | null> {
    const row = await this.row(taskId);
    return row ? mcpTask(row) : null;
  }

  /** Results are the journal's: nothing else may store one. */
  async storeTaskResult(): Promise<void> {
    throw new McpError(ErrorCode.InvalidRequest, "A Brain task's result is its call's, from the journal.");
  }

  async getTaskResult(taskId: string): Promise<Result> {
    const row = await this.require(taskId);
    if (!row.answer) throw new McpError(ErrorCode.InvalidRequest, "The task has not finished.");
    return callToolResult(this.scope.sessionId, row.seq, row.answer);
  }

  /**
   * Only `cancelled` can be asked for: Brain's call cancel, a conditional terminal write. A call
   * that answered first keeps its answer (the first terminal cause wins), and the task its status.
   */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled") {
      throw new McpError(ErrorCode.InvalidRequest, "A Brain task's status is its call's, from the journal.");
    }
    const row = await this.require(taskId);
    try {
      await cancelMcpCall(this.rt, this.scope.sessionId, row.seq);
    } catch (error) {
      throw toMcpError(error);
    }
  }

  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const after = decodeCursor(cursor);
    let rows: McpTaskRow[];
    try {
      rows = await listMcpTasks(this.rt.sql, this.scope.sessionId, this.scope.tokenId, after, PAGE + 1);
    } catch (error) {
      throw toMcpError(error);
    }
    const page = rows.slice(0, PAGE);
    const last = page.at(-1);
    return rows.length > PAGE && last
      ? { tasks: page.map(mcpTask), nextCursor: encodeCursor(last.seq) }
      : { tasks: page.map(mcpTask) };
  }
}

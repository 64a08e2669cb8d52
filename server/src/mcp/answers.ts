import type { ToolPlacement } from "@aexhq/brain-contracts";
import type { CallAnswer, McpTaskRow } from "@aexhq/brain-db/ops";
import type { CallToolResult, Task, Tool } from "@modelcontextprotocol/sdk/types.js";

/**
 * How Brain's journal reads in MCP: a session's placements as MCP tools, a call's answer as a
 * CallToolResult, a task row as an MCP Task. Pure functions: every server maps the same journal
 * to the same answer.
 */

/** `_meta` key naming the Brain call behind an MCP result (a reverse-DNS prefix, as MCP asks). */
export const BRAIN_CALL_META = "com.aexhq.brain/call";

/** MCP's default JSON Schema dialect; saying it again only trips validators that predate it. */
const DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema";

type JsonObject = Record<string, unknown>;

function isPlainObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** An object schema as MCP takes it, or null: MCP tools take and give JSON objects only. */
function objectSchema(schema: unknown): (JsonObject & { type: "object" }) | null {
  if (!isPlainObject(schema) || schema.type !== "object") return null;
  const { $schema, ...rest } = schema;
  return ($schema === undefined || $schema === DEFAULT_DIALECT ? rest : schema) as JsonObject & { type: "object" };
}

/**
 * The tools an MCP client sees: the session's placements (only `names` when given), with their
 * advertised schemas. A tool whose input is not a JSON object cannot be called with MCP
 * `arguments` and is left out; an output schema that is not an object's is not advertised (its
 * value still arrives, as text). Every tool may be called plainly or as a task.
 */
export function mcpTools(placements: readonly ToolPlacement[], names: ReadonlySet<string> | null): Tool[] {
  const tools: Tool[] = [];
  for (const p of placements) {
    if (names && !names.has(p.name)) continue;
    const inputSchema = objectSchema(p.inputSchema);
    if (!inputSchema) continue;
    const tool: Tool = {
      name: p.name,
      description: p.description,
      inputSchema,
      execution: { taskSupport: "optional" },
    };
    const outputSchema = objectSchema(p.outputSchema);
    if (outputSchema) tool.outputSchema = outputSchema;
    tools.push(tool);
  }
  return tools;
}

/** The status line the model would read first: the outcome without its value or error details. */
function statusLine(outcome: CallAnswer["outcome"]): string {
  const head: JsonObject = { status: outcome.status };
  const error = outcome.error as { code?: unknown; message?: unknown } | undefined;
  if (error) head.error = { code: error.code, message: error.message };
  if (outcome.cause !== undefined) head.cause = outcome.cause;
  if (outcome.message !== undefined) head.message = outcome.message;
  return JSON.stringify(head);
}

/**
 * A call's answer as MCP's CallToolResult. `ok`: the tool's `content` (else its value as JSON)
 * as text, and the value as `structuredContent` when it is an object. Anything else (an error,
 * timeout, cancelled, unknown) is `isError`, its text the status line then the content.
 */
export function callToolResult(sessionId: string, sequence: number, answer: CallAnswer): CallToolResult {
  const { outcome } = answer;
  const _meta = { [BRAIN_CALL_META]: { sessionId, sequence, status: outcome.status } };
  if (outcome.status === "ok") {
    const value = outcome.value;
    const text = answer.content ?? (value === undefined ? undefined : JSON.stringify(value));
    const result: CallToolResult = { content: text === undefined ? [] : [{ type: "text", text }], _meta };
    if (isPlainObject(value)) result.structuredContent = value;
    return result;
  }
  const line = statusLine(outcome);
  const text = answer.content === undefined ? line : `${line}\n${answer.content}`;
  return { content: [{ type: "text", text }], isError: true, _meta };
}

/** MCP's task status for an answer: a tool error is `failed`, as the Tasks spec asks. */
function statusOf(answer: CallAnswer | null): Task["status"] {
  if (!answer) return "working";
  if (answer.outcome.status === "ok") return "completed";
  return answer.outcome.status === "cancelled" ? "cancelled" : "failed";
}

const WORKING: Record<McpTaskRow["state"], string> = {
  pending: "The call waits for its host or worker.",
  running: "The call is running.",
  returned: "The call returned without a result and continues in the background.",
  ended: "The call ended.",
};

/** A task row as MCP's Task. */
export function mcpTask(row: McpTaskRow): Task {
  const status = statusOf(row.answer);
  const task: Task = {
    taskId: row.id,
    status,
    statusMessage: row.answer ? statusLine(row.answer.outcome) : WORKING[row.state],
    createdAt: row.createdAt.toISOString(),
    lastUpdatedAt: (row.answer?.at ?? row.createdAt).toISOString(),
    ttl: row.ttlMs,
    pollInterval: row.pollIntervalMs,
  };
  return task;
}

/** Whether a task status is final (MCP: completed, failed and cancelled never change). */
export function isTerminalStatus(status: Task["status"]): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

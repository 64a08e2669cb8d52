import type { ToolPlacement } from "@aexhq/brain-contracts";
import { mcpSession } from "@aexhq/brain-db/ops";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  GetTaskPayloadRequestSchema,
  ListToolsRequestSchema,
  RELATED_TASK_META_KEY,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { callToolResult, mcpTools } from "./answers.js";
import { type McpCallDeps, type McpScope, startMcpCall, waitForAnswer } from "./calls.js";
import { toMcpError } from "./errors.js";
import { JournalTaskStore } from "./task-store.js";

/** What Brain says it is at initialize. */
const SERVER_INFO = { name: "brain", version: "0.1.0" };

/**
 * Tools, and Tasks for tools/call (list and cancel too). The SDK answers tasks/get, tasks/list
 * and tasks/cancel from the task store; tools/list, tools/call and tasks/result are Brain's own.
 */
const CAPABILITIES = {
  tools: {},
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
};

/** The SDK builds a JSON Schema validator per server unless given one: one per process will do. */
let validator: AjvJsonSchemaValidator | undefined;

/**
 * The official SDK's MCP server for one HTTP request (stateless Streamable HTTP): nothing of it
 * outlives the request, so any server can answer the next one. Everything it reports comes from
 * the journal through `scope`: the session's tools, its calls and the principal's tasks.
 */
export function mcpServerFor(rt: McpCallDeps, scope: McpScope): Server {
  const store = new JournalTaskStore(rt, scope);
  validator ??= new AjvJsonSchemaValidator();
  // The low-level Server, not McpServer: Brain's tools are the session's placements, with JSON
  // Schemas already, not tools registered with zod, and their list never changes.
  const server = new Server(SERVER_INFO, {
    capabilities: CAPABILITIES,
    taskStore: store,
    jsonSchemaValidator: validator,
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    try {
      const session = await mcpSession(rt.sql, scope.sessionId);
      return { tools: session ? mcpTools(session.tools as ToolPlacement[], scope.tools) : [] };
    } catch (error) {
      throw toMcpError(error);
    }
  });

  // A task-augmented call answers at once with its task; a plain one waits for the call's answer
  // (its first result, or its end). A client that leaves a plain call leaves the call running.
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args, task } = request.params;
    if (task) return { task: await store.createTask({ ttl: task.ttl }, extra.requestId, request) };
    try {
      const seq = await startMcpCall(rt, scope, name, args ?? {}, null);
      const answer = await waitForAnswer(rt, scope.sessionId, seq, extra.signal);
      return callToolResult(scope.sessionId, seq, answer);
    } catch (error) {
      throw toMcpError(error);
    }
  });

  // tasks/result blocks until the task's call answers: woken by the commit that answers it, on
  // whichever server that commit happens, rather than by polling.
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params;
    const row = await store.require(taskId);
    try {
      const answer = row.answer ?? (await waitForAnswer(rt, scope.sessionId, row.seq, extra.signal));
      const result: CallToolResult = callToolResult(scope.sessionId, row.seq, answer);
      result._meta = { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } };
      return result;
    } catch (error) {
      throw toMcpError(error);
    }
  });
  return server;
}

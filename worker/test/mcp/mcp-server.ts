// A real MCP server for the MCP Environment tests, built with the official SDK (McpServer and the
// Streamable HTTP server transport, one McpServer per MCP session) on a node:http port. It serves
// a slow tool that waits for cancellation, a tool that reports progress, a failing tool (isError)
// and a task tool whose task completes when the test says so. It notes what reached it.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

export interface SeenRequest {
  method: string;
  session: string | undefined;
  authorization: string | undefined;
  tool?: string;
  task?: boolean;
}

export interface TestMcpServer {
  url: string;
  /** Every JSON-RPC message POSTed to it, in order. */
  seen: SeenRequest[];
  /** Slow calls that saw their request cancelled (notifications/cancelled), by input `label`. */
  cancelled: string[];
  /** Slow calls that started, by label. */
  slowStarted: string[];
  /** Tasks created, by id. */
  tasks: string[];
  /** Completes a task created by the task tool. */
  completeTask(taskId: string, result: CallToolResult): Promise<void>;
  close(): Promise<void>;
}

export async function startMcpServer(): Promise<TestMcpServer> {
  const taskStore = new InMemoryTaskStore();
  const transports = new Map<string, StreamableHTTPServerTransport>();
  const seen: SeenRequest[] = [];
  const cancelled: string[] = [];
  const slowStarted: string[] = [];
  const tasks: string[] = [];
  const completers = new Map<string, (result: CallToolResult) => Promise<void>>();

  function mcpServer(): McpServer {
    const server = new McpServer(
      { name: "brain-test-tools", version: "1.0.0" },
      { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {}, list: {} } }, taskStore },
    );
    server.registerTool(
      "slow",
      { description: "Waits until cancelled (or 60 s).", inputSchema: { label: z.string() } },
      async ({ label }, extra) => {
        slowStarted.push(label);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 60_000);
          extra.signal.addEventListener("abort", () => {
            cancelled.push(label);
            clearTimeout(timer);
            resolve();
          });
        });
        return { content: [{ type: "text", text: `slept (${label})` }] };
      },
    );
    server.registerTool(
      "progress",
      {
        description: "Counts to `steps`, reporting progress.",
        inputSchema: { steps: z.number().int().min(1).max(10) },
        outputSchema: { counted: z.number() },
      },
      async ({ steps }, extra) => {
        const token = extra._meta?.progressToken;
        for (let i = 1; i <= steps; i++) {
          if (token !== undefined) {
            await extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken: token, progress: i, total: steps, message: `step ${i}` },
            });
          }
        }
        return { content: [{ type: "text", text: `counted to ${steps}` }], structuredContent: { counted: steps } };
      },
    );
    server.registerTool("failing", { description: "Always fails.", inputSchema: {} }, async () => ({
      isError: true,
      content: [{ type: "text", text: "the disk is full" }],
    }));
    server.experimental.tasks.registerToolTask(
      "long_task",
      {
        description: "A long job run as an MCP task; it completes when the test says so.",
        inputSchema: { job: z.string() },
        outputSchema: { answer: z.number() },
        execution: { taskSupport: "required" },
      },
      {
        async createTask(_args, extra) {
          const task = await extra.taskStore.createTask({ ttl: 600_000, pollInterval: 100 });
          tasks.push(task.taskId);
          completers.set(task.taskId, (result) => extra.taskStore.storeTaskResult(task.taskId, "completed", result));
          return { task };
        },
        async getTask(_args, extra) {
          return await extra.taskStore.getTask(extra.taskId);
        },
        async getTaskResult(_args, extra) {
          return (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult;
        },
      },
    );
    return server;
  }

  const http = createServer(async (req, res) => {
    try {
      const body = req.method === "POST" ? JSON.parse(await text(req)) : undefined;
      const session = header(req, "mcp-session-id");
      for (const m of Array.isArray(body) ? body : body ? [body] : []) {
        if (typeof m?.method !== "string") continue;
        const entry: SeenRequest = { method: m.method, session, authorization: header(req, "authorization") };
        if (m.method === "tools/call")
          Object.assign(entry, { tool: m.params?.name, task: m.params?.task !== undefined });
        seen.push(entry);
      }
      let transport = session ? transports.get(session) : undefined;
      if (!transport) {
        if (session || body?.method !== "initialize") {
          res
            .writeHead(404)
            .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "no session" }, id: null }));
          return;
        }
        const fresh = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void transports.set(id, fresh),
        });
        fresh.onclose = () => {
          if (fresh.sessionId) transports.delete(fresh.sessionId);
        };
        await mcpServer().connect(fresh);
        transport = fresh;
      }
      await transport.handleRequest(req, res, body);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    }
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    cancelled,
    slowStarted,
    tasks,
    async completeTask(taskId, result) {
      const complete = completers.get(taskId);
      if (!complete) throw new Error(`no task ${taskId}`);
      await complete(result);
    },
    async close() {
      for (const t of transports.values()) await t.close().catch(() => {});
      taskStore.cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function text(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

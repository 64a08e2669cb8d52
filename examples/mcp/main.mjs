// An MCP Environment: the tools of a remote MCP server (Streamable HTTP), placed into a session
// from the server's tools/list and called by Brain's worker. To run offline, this example starts
// a small MCP server of its own with the official SDK: `count` reports progress (journaled as
// `progress` events), `report` runs as an MCP task (its id is journaled before the first poll, so
// a worker that dies mid-task is replaced by one that resumes polling it).
// Run: npm run example -- mcp   (starts a Brain, with its worker, unless BRAIN_URL and BRAIN_TOKEN
// are set; then a worker must be running against that Brain's database: npm run worker)
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { Brain, mcpEnv, mcpTools } from "@aexhq/brain";
import { InMemoryTaskStore } from "@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

const TOKEN = "example-token-not-a-real-one";

// The "remote" MCP server: one McpServer per MCP session, tasks kept in memory.
const taskStore = new InMemoryTaskStore();
function tools() {
  const server = new McpServer(
    { name: "example-tools", version: "1.0.0" },
    { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore },
  );
  server.registerTool(
    "count",
    {
      description: "Count to n, reporting progress.",
      inputSchema: { n: z.number().int().min(1).max(5) },
      outputSchema: { counted: z.number() },
    },
    async ({ n }, extra) => {
      for (let i = 1; i <= n; i++) {
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken, progress: i, total: n },
          });
        }
      }
      return { content: [{ type: "text", text: `counted to ${n}` }], structuredContent: { counted: n } };
    },
  );
  server.experimental.tasks.registerToolTask(
    "report",
    {
      description: "Build a report (a long job, run as an MCP task).",
      inputSchema: { topic: z.string() },
      outputSchema: { pages: z.number() },
      execution: { taskSupport: "required" },
    },
    {
      async createTask({ topic }, extra) {
        const task = await extra.taskStore.createTask({ ttl: 60_000, pollInterval: 200 });
        setTimeout(() => {
          void extra.taskStore.storeTaskResult(task.taskId, "completed", {
            content: [{ type: "text", text: `a 3-page report on ${topic}` }],
            structuredContent: { pages: 3 },
          });
        }, 500);
        return { task };
      },
      getTask: (_args, extra) => extra.taskStore.getTask(extra.taskId),
      getTaskResult: (_args, extra) => extra.taskStore.getTaskResult(extra.taskId),
    },
  );
  return server;
}

const transports = new Map();
const mcpHttp = createServer(async (req, res) => {
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    res.writeHead(401).end();
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
  let transport = transports.get(req.headers["mcp-session-id"]);
  if (!transport) {
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    await tools().connect(transport);
  }
  await transport.handleRequest(req, res, body);
});
await new Promise((resolve) => mcpHttp.listen(0, "127.0.0.1", resolve));
const url = `http://127.0.0.1:${mcpHttp.address().port}/mcp`;

// The binding: its headers are sealed with the session, never journaled.
const exampleTools = mcpEnv({ name: "example", url, headers: { authorization: `Bearer ${TOKEN}` } });

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [
        {
          toolCalls: [
            { name: "count", input: { n: 3 } },
            { name: "report", input: { topic: "durable tools" } },
          ],
        },
        { text: "done" },
      ],
    },
    tools: [mcpTools(exampleTools)],
  });
  console.log(await session.send("count, then write the report"));
  for await (const e of session.events({ after: 0, follow: false })) {
    console.log(e.sequence, e.kind, JSON.stringify(e.payload));
  }
  console.log(
    `\nThe same journal in SQL:\n  SELECT seq, kind, payload FROM brain.journal WHERE session_id = '${session.id}' ORDER BY seq;`,
  );
} finally {
  await brain.close();
  for (const t of transports.values()) await t.close();
  taskStore.cleanup(); // its expiry timers would keep the process alive
  mcpHttp.closeAllConnections();
  mcpHttp.close();
}

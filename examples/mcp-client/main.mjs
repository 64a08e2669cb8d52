// Brain as an MCP server: an MCP client (the official SDK's) lists a session's tools, calls one,
// and calls one as a durable task, whose status and result any Brain server can answer.
// Run: npm run example -- mcp-client   (starts a Brain for you unless BRAIN_URL and BRAIN_TOKEN are set)
import { Brain, tool } from "@aexhq/brain";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

// Your application hosts the tools, as always.
const weather = tool({
  name: "weather",
  description: "Today's weather in a city.",
  input: z.object({ city: z.string() }),
  output: z.object({ city: z.string(), celsius: z.number() }),
  run: async ({ city }, ctx) => ctx.finish({ city, celsius: city.length + 10 }),
});

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
const mcp = new Client({ name: "example", version: "1.0.0" });
try {
  const session = await brain.sessions.create({ model: { provider: "scripted", script: [] }, tools: [weather()] });

  // Any MCP client: the session's endpoint, with a Brain token as bearer.
  const url = new URL(`/v1/sessions/${session.id}/mcp`, process.env.BRAIN_URL);
  const headers = { authorization: `Bearer ${process.env.BRAIN_TOKEN}` };
  await mcp.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));

  const { tools } = await mcp.listTools();
  console.log("tools:", tools.map((t) => t.name).join(", "));

  const plain = await mcp.callTool({ name: "weather", arguments: { city: "Paris" } });
  console.log("plain:", JSON.stringify(plain.structuredContent));

  // As a task: tools/call answers at once with a task id, kept in Postgres.
  const stream = mcp.experimental.tasks.callToolStream(
    { name: "weather", arguments: { city: "Lisbon" } },
    CallToolResultSchema,
    { task: { ttl: 60_000 } },
  );
  let taskId;
  for await (const message of stream) {
    if (message.type === "taskCreated") taskId = message.task.taskId;
    if (message.type === "result") console.log("task result:", JSON.stringify(message.result.structuredContent));
    if (message.type === "error") throw message.error;
  }
  // Any server, later, after a restart or a fail-over, answers for it.
  const task = await mcp.experimental.tasks.getTask(taskId);
  console.log("task:", task.status);
  const again = await mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  console.log("task result again:", JSON.stringify(again.structuredContent));
} finally {
  await mcp.close();
  await brain.close();
}

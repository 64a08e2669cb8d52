// An MCP client's call of a tool Brain runs itself (an HTTP Environment descriptor): the call's
// worker job commits with its tool_call_started, a worker claims it, and the MCP answer (plain,
// and through a task) is the journal's, as for a host tool.
import { httpEnv, tool } from "@aexhq/brain";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type BrainWithWorker, startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { type JsonServer, startJsonServer } from "../../../testkit/json-server.js";
import { within } from "../../../testkit/wait.js";

let bw: BrainWithWorker;
let api: JsonServer;

beforeAll(async () => {
  api = await startJsonServer((r) => ({ body: { sku: r.path.split("/").at(-1), stock: 7 } }));
  bw = await startBrainWithWorker();
}, 60_000);
afterAll(async () => {
  await bw?.close();
  await api?.close();
});

const stock = tool({
  name: "stock",
  description: "Stock of one SKU.",
  input: z.object({ sku: z.string() }),
  output: z.object({ sku: z.string(), stock: z.number() }),
  implementation: () => ({ type: "http_json", method: "GET", path: "/stock/{sku}" }),
});

describe("MCP calls of worker tools", () => {
  it("runs an HTTP Environment tool through its worker job, plainly and as a task", async () => {
    const env = httpEnv({ name: "inventory", baseUrl: api.url });
    const session = await bw.client.sessions.create({
      model: { provider: "scripted", script: [] },
      tools: [stock({ env })],
    });
    const client = new Client({ name: "worker-test", version: "1.0.0" });
    const url = new URL(`${bw.brain.url}/v1/sessions/${session.id}/mcp`);
    await client.connect(
      new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { authorization: `Bearer ${bw.brain.token}` } },
      }),
    );
    try {
      await client.listTools();
      const plain = await within(
        client.callTool({ name: "stock", arguments: { sku: "a-1" } }),
        "the plain call",
        30_000,
      );
      expect(plain.structuredContent).toEqual({ sku: "a-1", stock: 7 });

      const created = await client.request(
        { method: "tools/call", params: { name: "stock", arguments: { sku: "b-2" }, task: { ttl: 60_000 } } },
        z.object({ task: z.object({ taskId: z.string(), status: z.string() }) }),
      );
      expect(created.task.status).toBe("working");
      const result = await within(
        client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema),
        "the task's result",
        30_000,
      );
      expect(result.structuredContent).toEqual({ sku: "b-2", stock: 7 });
      expect(api.requests.map((r) => r.path)).toEqual(["/stock/a-1", "/stock/b-2"]);

      const calls = await bw.brain.db.sql<{ executor: string; origin: string; state: string }[]>`
        SELECT executor, origin, state FROM brain.calls WHERE session_id = ${session.id} ORDER BY seq`;
      expect(calls).toEqual([
        { executor: "worker", origin: "mcp", state: "ended" },
        { executor: "worker", origin: "mcp", state: "ended" },
      ]);
    } finally {
      await client.close();
    }
  }, 60_000);
});

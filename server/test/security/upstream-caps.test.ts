// Finding 4 of the tenant review: upstream answers were read whole, with no byte cap. A model
// provider or an MCP server that answers without end is now cut at BRAIN_MAX_UPSTREAM_BYTES: the
// read stops, the connection goes, and the call (or the session creation) says why.
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mcpEnv, mcpTools } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { until } from "../../../testkit/wait.js";
import { callOutcomes } from "../environments/environments-support.js";

const CAP = 256 * 1024;
const stack = startedBeforeAll(() => startBrainWithWorker({ BRAIN_MAX_UPSTREAM_BYTES: String(CAP) }));
const provider = startedBeforeAll(() => startFakeOpenAI());

/** Writes JSON that never ends, paced by the socket; `closed` settles when the reader gives up. */
function flood(res: ServerResponse, closed: () => void): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.write('{"jsonrpc":"2.0","id":1,"result":{"tools":[');
  const chunk = `${'{"name":"x","inputSchema":{"type":"object"}},'.repeat(400)}`;
  const more = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once("drain", more);
  };
  res.once("close", closed);
  more();
}

interface FloodingMcp {
  url: string;
  /** How many flooding answers were cut off by their reader. */
  cut: number;
  close(): Promise<void>;
}

/**
 * A minimal Streamable HTTP MCP server: initialize and tools/list answer normally unless
 * `floodList`; tools/call answers without end.
 */
async function floodingMcp(floodList: boolean): Promise<FloodingMcp> {
  const state = { cut: 0 };
  const server: Server = createServer((req, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c));
    req.on("end", () => {
      if (req.method !== "POST") return res.writeHead(405).end();
      const message = JSON.parse(text) as { id?: number; method: string };
      const answer = (result: unknown) =>
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
      if (message.id === undefined) return res.writeHead(202).end();
      if (message.method === "initialize") {
        return answer({
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "f", version: "1" },
        });
      }
      if (message.method === "tools/list" && !floodList) {
        return answer({ tools: [{ name: "flood", inputSchema: { type: "object" } }] });
      }
      flood(res, () => state.cut++);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    get cut() {
      return state.cut;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe("upstream answers are capped", () => {
  it("fails the turn's model call answer_too_large when the provider streams without end", async () => {
    provider.reply({ kind: "endless" });
    const session = await stack.client.sessions.create({
      model: { provider: "openai", name: "m", apiKey: "sk-test-0123456789", baseUrl: provider.url },
    });
    const failed = await session.send("hi").then(
      () => null,
      (e: { code?: string; message: string }) => e,
    );
    expect(failed?.message).toMatch(/OpenAI answered more than 262144 bytes/);
    const [ended] = await stack.brain.db.sql<{ payload: { outcome: { error: { code: string } } } }[]>`
      SELECT payload FROM brain.journal WHERE session_id = ${session.id} AND kind = 'model_call_ended'`;
    expect(ended?.payload.outcome.error.code).toBe("answer_too_large");
  });

  it("refuses a session whose MCP server lists tools without end, and lets its connection go", async () => {
    const mcp = await floodingMcp(true);
    try {
      const refused = await stack.client.sessions
        .create({ model: { provider: "scripted", script: [] }, tools: [mcpTools(mcpEnv({ name: "f", url: mcp.url }))] })
        .then(
          () => null,
          (e: { code?: string; message: string }) => e,
        );
      expect(refused?.code).toBe("mcp_unavailable");
      expect(refused?.message).toMatch(new RegExp(`more than ${CAP} bytes`));
      await until("the flooding answer to be cut off", () => mcp.cut > 0);
    } finally {
      await mcp.close();
    }
  });

  it("ends an MCP call answer_too_large when the server answers it without end", async () => {
    const mcp = await floodingMcp(false);
    try {
      const session = await stack.client.sessions.create({
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "flood", input: {} }] }, { text: "done" }] },
        tools: [mcpTools(mcpEnv({ name: "f", url: mcp.url }))],
      });
      expect(await session.send("go")).toBe("done");
      const [outcome] = await callOutcomes(stack.brain.db.sql, session.id);
      expect(outcome?.error?.code).toBe("answer_too_large");
      await until("the flooding answer to be cut off", () => mcp.cut > 0);
    } finally {
      await mcp.close();
    }
  });
});

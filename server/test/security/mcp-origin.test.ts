// Finding 7 of the tenant review: the MCP endpoint answered a foreign Origin, which the Streamable
// HTTP transport requires servers to refuse (a page another site served, a DNS rebinding attack).
// Absent, or one of Brain's own origins, is fine; anything else is 403 before anything is read.
import { describe, expect, it } from "vitest";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";

const brain = startedBeforeAll(() => startBrain({ env: { BRAIN_PUBLIC_URL: "https://brain.example.com/base" } }));

async function initialize(origin: string | undefined): Promise<{ status: number; body: Record<string, unknown> }> {
  const session = await fetch(`${brain.url}/v1/sessions`, {
    method: "POST",
    headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
    body: JSON.stringify({ model: { provider: "scripted", script: [] } }),
  }).then((r) => r.json() as Promise<{ id: string }>);
  const res = await fetch(`${brain.url}/v1/sessions/${session.id}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${brain.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(origin === undefined ? {} : { origin }),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe("the MCP endpoint's Origin check", () => {
  it("answers requests without an Origin, or from Brain's own origins", async () => {
    const port = new URL(brain.url).port;
    for (const origin of [
      undefined,
      `http://127.0.0.1:${port}`,
      `http://localhost:${port}`,
      "https://brain.example.com",
    ]) {
      expect([origin, (await initialize(origin)).status]).toEqual([origin, 200]);
    }
  });

  it("refuses a foreign Origin with 403 and a JSON-RPC error", async () => {
    const port = new URL(brain.url).port;
    for (const origin of [
      "https://evil.example",
      `http://evil.example:${port}`,
      `http://127.0.0.1:${Number(port) + 1}`,
      "https://brain.example.com:8443",
      "null",
    ]) {
      const { status, body } = await initialize(origin);
      expect([origin, status]).toEqual([origin, 403]);
      expect((body.error as { data: { code: string } }).data.code).toBe("forbidden");
    }
  });
});

// examples/summarizer as a user runs it: a spawned Brain server and the example as its own process.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { type ServerProcess, spawnNode, spawnServer } from "../../testkit/server-process.js";

let db: TestDatabase;
let server: ServerProcess;

beforeAll(async () => {
  db = await createTestDatabase();
  server = await spawnServer({ databaseUrl: db.url, env: { BRAIN_LOG_LEVEL: "warn" } });
});
afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

describe("examples/summarizer", () => {
  it("summarises with ctx.model: the tool's model call is journaled with its origin, the result carries content", async () => {
    const example = spawnNode("examples/summarizer/main.mjs", {
      env: { BRAIN_URL: server.url, BRAIN_TOKEN: server.token, OPENAI_API_KEY: undefined },
    });
    const { code } = await example.exited;
    const out = example.output();
    expect(code, out).toBe(0);
    expect(out.split("\n")[0]).toBe(
      "RFC 001 says Brain keeps an ordered, durable journal of every session in Postgres.",
    );
    const sessionId = /session_id = '([0-9a-f-]{36})'/.exec(out)?.[1] as string;
    const rows = await db.sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
      SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
    const call = rows.find((r) => r.kind === "tool_call_started")!;
    const toolModel = rows.filter(
      (r) => r.kind.startsWith("model_call_") && (r.payload.origin as { type?: string } | undefined)?.type === "tool",
    );
    expect(toolModel.map((r) => r.kind)).toEqual(["model_call_started", "model_call_ended"]);
    expect(toolModel[0]!.payload.origin).toEqual({ type: "tool", sessionId, sequence: call.seq });
    const summary = "Brain records each session's work in Postgres and runs each tool call once.";
    const result = rows.find((r) => r.kind === "tool_result")!;
    expect(result.payload).toEqual({
      call: call.seq,
      outcome: { status: "ok", value: { documentId: "rfc-001", summary, inputTokens: 0 } },
      content: `Summary of rfc-001: ${summary}`,
    });
    // The model's answer is journaled before the tool's result that used it.
    expect(toolModel[1]!.seq).toBeLessThan(result.seq);
  }, 60_000);
});

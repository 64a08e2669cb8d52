// The seed's `lookup` example, exactly as a user runs it: a real Brain server process and the
// example as a separate Node process talking to it over HTTP and WebSocket.
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

describe("examples/lookup", () => {
  it("runs against a spawned server, prints done and the session's journal", async () => {
    const example = spawnNode("examples/lookup/main.mjs", {
      env: { BRAIN_URL: server.url, BRAIN_TOKEN: server.token },
    });
    const { code } = await example.exited;
    const out = example.output();
    expect(code, out).toBe(0);
    const lines = out.split("\n");
    expect(lines[0]).toBe("done");

    // The journal as printed: "<sequence> <kind> <payload JSON>", in order, one line per record.
    const printed = lines
      .map((line) => /^(\d+) (\S+) (.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map(([, seq, kind, payload]) => ({ seq: Number(seq), kind, payload: JSON.parse(payload as string) }));
    const sessionId = /session_id = '([0-9a-f-]{36})'/.exec(out)?.[1] as string;
    expect(sessionId).toBeDefined();
    const stored = await db.sql<{ seq: number; kind: string; payload: unknown }[]>`
      SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
    expect(printed).toEqual(stored);

    const call = printed.find((r) => r.kind === "tool_call_started");
    expect(call?.payload).toMatchObject({ tool: "lookup", input: { id: "42" } });
    const own = printed.filter((r) => r.payload.call === call?.seq).map((r) => [r.kind, r.payload]);
    expect(own).toEqual([
      ["lookup_started", { call: call?.seq, data: { id: "42" } }],
      ["tool_result", { call: call?.seq, outcome: { status: "ok", value: { value: "Ada Lovelace" } } }],
      ["tool_call_ended", { call: call?.seq, outcome: { status: "ok", value: { value: "Ada Lovelace" } } }],
    ]);
    expect(printed.at(-1)).toMatchObject({ kind: "activation_ended", payload: { status: "completed", text: "done" } });
  }, 60_000);
});

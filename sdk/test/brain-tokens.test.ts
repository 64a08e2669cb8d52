// The SDK with application tokens: `new Brain({ url, token })` works the same with either kind of
// token (host tools included); token administration through `brain.tokens` needs the operator's.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../testkit/brain.js";
import { Brain } from "../src/brain.js";
import { tool } from "../src/tool.js";

let server: InProcessBrain;
const clients: Brain[] = [];

beforeAll(async () => {
  server = await startBrain();
});
afterAll(async () => {
  for (const c of clients) await c.close();
  await server?.close();
});

function client(token: string): Brain {
  const brain = new Brain({ url: server.url, token });
  clients.push(brain);
  return brain;
}

const echo = tool({
  name: "echo",
  description: "Echo the input.",
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  run: async (input) => input,
});

describe("application tokens through the SDK", () => {
  it("runs a session with host tools under an application token, invisible to another application", async () => {
    const operator = client(server.token);
    const a = client((await operator.tokens.create("a")).token);
    const b = client((await operator.tokens.create("b")).token);

    const session = await a.sessions.create({
      model: {
        provider: "scripted",
        script: [{ toolCalls: [{ name: "echo", input: { text: "hi" } }] }, { text: "done" }],
      },
      tools: [echo()],
    });
    await expect(session.send("go")).resolves.toBe("done");
    // The host (registered with the application token) ran the tool.
    const [result] = await server.db.sql<{ payload: { outcome: unknown } }[]>`
      SELECT payload FROM journal WHERE session_id = ${session.id} AND kind = 'tool_result'`;
    expect(result?.payload.outcome).toMatchObject({ status: "ok", value: { text: "hi" } });
    const [host] = await server.db.sql<{ token_id: string | null }[]>`
      SELECT h.token_id FROM hosts h JOIN sessions s ON s.host_id = h.id WHERE s.id = ${session.id}`;
    expect(host?.token_id).toEqual(expect.any(String));

    await expect(b.sessions.get(session.id)).rejects.toMatchObject({ code: "not_found" });
    expect((await b.sessions.list()).sessions).toEqual([]);
    expect((await a.sessions.list()).sessions.map((s) => s.id)).toEqual([session.id]);
    expect((await operator.sessions.get(session.id)).id).toBe(session.id);
  });

  it("administers tokens with the operator token only; a revoked token is unauthorized", async () => {
    const operator = client(server.token);
    const created = await operator.tokens.create("short-lived");
    expect(created.token).toMatch(/^brain_app_/);
    const app = client(created.token);
    await expect(app.tokens.create("mine")).rejects.toMatchObject({ code: "forbidden" });
    await expect(app.tokens.list()).rejects.toMatchObject({ code: "forbidden" });
    await expect(app.tokens.revoke(created.id)).rejects.toMatchObject({ code: "forbidden" });
    expect((await operator.tokens.list()).find((t) => t.id === created.id)).toMatchObject({ revokedAt: null });
    expect((await operator.tokens.revoke(created.id)).revokedAt).toEqual(expect.any(String));
    await expect(app.sessions.list()).rejects.toMatchObject({ code: "unauthorized" });
  });
});

// The SDK's HTTP side against a real Brain server (startBrain): options, idempotent creation and
// messages, the NDJSON event stream (cursor, paging past the server's page size, follow), error
// bodies, list/end/delete.
import { BrainError } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../testkit/brain.js";
import { startedBeforeAll, startedBeforeEach } from "../../testkit/fixtures.js";
import { scripted } from "../../testkit/turns.js";
import { within } from "../../testkit/wait.js";
import { Brain } from "../src/brain.js";
import { tool } from "../src/tool.js";

const server = startedBeforeAll(() => startBrain());
// A trailing slash on the base URL is tolerated.
const brain = startedBeforeEach(() => new Brain({ url: `${server.url}/`, token: server.token }));

async function journal(sessionId: string) {
  return server.db.sql<{ seq: number; kind: string; payload: unknown }[]>`
    SELECT seq, kind, payload FROM journal WHERE session_id = ${sessionId} ORDER BY seq`;
}

describe("Brain options", () => {
  it("fails clearly without a URL or a token, and reads BRAIN_URL / BRAIN_TOKEN", async () => {
    const saved = { url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN };
    delete process.env.BRAIN_URL;
    delete process.env.BRAIN_TOKEN;
    try {
      expect(() => new Brain({ token: "t" })).toThrow(/BRAIN_URL/);
      expect(() => new Brain({ url: "http://x" })).toThrow(/BRAIN_TOKEN/);
      expect(() => new Brain({ url: "ftp://x", token: "t" })).toThrow(BrainError);
      process.env.BRAIN_URL = server.url;
      process.env.BRAIN_TOKEN = server.token;
      const fromEnv = new Brain();
      await expect(fromEnv.sessions.list({ limit: 1 })).resolves.toMatchObject({ sessions: expect.any(Array) });
      await fromEnv.close();
    } finally {
      if (saved.url === undefined) delete process.env.BRAIN_URL;
      else process.env.BRAIN_URL = saved.url;
      if (saved.token === undefined) delete process.env.BRAIN_TOKEN;
      else process.env.BRAIN_TOKEN = saved.token;
    }
  });
});

describe("sessions over HTTP", () => {
  it("creates sessions and posts messages idempotently, and returns the activation's text", async () => {
    const params = { model: scripted("the answer"), metadata: { app: "test" } };
    const session = await brain.sessions.create(params, { idempotencyKey: "create-1" });
    expect(session.info).toMatchObject({ status: "active", hostId: null, tools: [], metadata: { app: "test" } });
    const again = await brain.sessions.create(params, { idempotencyKey: "create-1" });
    expect(again.id).toBe(session.id);
    await expect(
      brain.sessions.create({ ...params, metadata: { app: "other" } }, { idempotencyKey: "create-1" }),
    ).rejects.toMatchObject({ code: "idempotency_conflict" });

    await expect(session.send("hello", { idempotencyKey: "msg-1" })).resolves.toBe("the answer");
    await expect(session.send("hello", { idempotencyKey: "msg-1" })).resolves.toBe("the answer");
    await expect(session.send("goodbye", { idempotencyKey: "msg-1" })).rejects.toMatchObject({
      code: "idempotency_conflict",
    });
    const records = await journal(session.id);
    expect(records.filter((r) => r.kind === "user_message").map((r) => r.payload)).toEqual([{ text: "hello" }]);
  });

  it("streams the journal as NDJSON from a cursor, exactly as stored", async () => {
    const session = await brain.sessions.create({ model: scripted("réponse", "deuxième") });
    await session.send("é ✓ 😀");
    await session.send("again");
    const stored = await journal(session.id);
    const events = [];
    for await (const event of session.events({ after: 1 })) events.push(event);
    expect(events.map((e) => [e.sequence, e.kind, e.payload])).toEqual(
      stored.slice(1).map((r) => [r.seq, r.kind, r.payload]),
    );
    expect(events.find((e) => e.kind === "user_message")?.payload).toEqual({ text: "é ✓ 😀" });
    for (const e of events) expect(Number.isNaN(Date.parse(e.createdAt))).toBe(false);

    const middle = stored[4]?.seq as number;
    const resumed = [];
    for await (const event of session.events({ after: middle })) resumed.push(event.sequence);
    expect(resumed).toEqual(stored.filter((r) => r.seq > middle).map((r) => r.seq));
  });

  it("pages through a journal longer than the server's page, without gaps or duplicates", async () => {
    const count = 620;
    const chatty = tool({
      name: "chatty",
      description: "Emits many events.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const emits = Array.from({ length: count }, (_, i) => ctx.emit("tick", { i }));
        await Promise.all(emits);
        return ctx.finish({ emitted: count });
      },
    });
    const session = await brain.sessions.create({
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "chatty", input: {} }] }, { text: "done" }] },
      tools: [chatty()],
    });
    await session.send("go");
    const stored = await journal(session.id);
    expect(stored.length).toBeGreaterThan(count);
    const sequences: number[] = [];
    for await (const event of session.events()) sequences.push(event.sequence);
    expect(sequences).toEqual(stored.map((_, i) => i + 1));
  });

  it("follows the journal until the session ends, or until the signal aborts", async () => {
    const session = await brain.sessions.create({ model: scripted("one") });
    const last = (await journal(session.id)).at(-1)?.seq as number;
    const seen: string[] = [];
    const following = (async () => {
      for await (const event of session.events({ after: last, follow: true })) seen.push(event.kind);
    })();
    await session.send("hi");
    await session.end();
    await within(following, "the followed stream to end with the session");
    expect(seen[0]).toBe("user_message");
    expect(seen.at(-1)).toBe("session_ended");

    const open = await brain.sessions.create({ model: scripted("two") });
    const controller = new AbortController();
    const kinds: string[] = [];
    const aborted = (async () => {
      for await (const event of open.events({ follow: true, signal: controller.signal })) {
        kinds.push(event.kind);
        controller.abort();
      }
    })();
    await within(aborted, "the aborted stream to end quietly");
    expect(kinds).toEqual(["session_created"]);
  });

  it("turns an error body into a BrainError with its code", async () => {
    await expect(brain.sessions.get("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({
      name: "BrainError",
      code: "not_found",
    });
    await expect(brain.sessions.list({ limit: 1000 })).rejects.toMatchObject({ code: "invalid_request" });
    const wrong = new Brain({ url: server.url, token: "not-the-token" });
    await expect(wrong.sessions.list()).rejects.toMatchObject({ code: "unauthorized" });
    await wrong.close();
    const ended = await brain.sessions.create({ model: scripted() });
    await ended.end();
    await expect(ended.send("too late")).rejects.toMatchObject({ code: "session_ended" });
  });

  it("lists (newest first, with a cursor), ends and deletes", async () => {
    const made = [];
    for (let i = 0; i < 3; i++)
      made.push(await brain.sessions.create({ model: scripted(), metadata: { i: String(i) } }));
    const first = await brain.sessions.list({ limit: 2 });
    expect(first.sessions.map((s) => s.id)).toEqual([made[2]?.id, made[1]?.id]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await brain.sessions.list({ limit: 2, cursor: first.nextCursor as string });
    expect(second.sessions[0]?.id).toBe(made[0]?.id);

    const session = first.sessions[0]!;
    expect((await session.end()).status).toBe("ended");
    expect((await brain.sessions.get(session.id)).info.status).toBe("ended");
    await expect(session.delete()).resolves.toBeUndefined();
    await expect(brain.sessions.get(session.id)).rejects.toMatchObject({ code: "not_found" });
    await expect(session.delete()).rejects.toMatchObject({ code: "not_found" });
  });

  it("reports a failure without a Brain error body as request_failed", async () => {
    const unreachable = new Brain({ url: "http://127.0.0.1:1", token: "t" });
    await expect(unreachable.sessions.list()).rejects.toMatchObject({ code: "request_failed" });
  });
});

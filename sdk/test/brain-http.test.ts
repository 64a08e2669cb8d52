import { BrainError } from "@aexhq/brain-contracts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Brain } from "../src/brain.js";
import { FakeBrain } from "./fake-brain.js";

let server: FakeBrain;
let brain: Brain;

beforeEach(async () => {
  server = await new FakeBrain().start();
  brain = new Brain({ url: `${server.url}/`, token: server.token });
});
afterEach(async () => {
  await brain.close();
  await server.stop();
});

describe("Brain options", () => {
  it("fails clearly without a URL or a token", () => {
    const saved = { url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN };
    delete process.env.BRAIN_URL;
    delete process.env.BRAIN_TOKEN;
    try {
      expect(() => new Brain({ token: "t" })).toThrow(/BRAIN_URL/);
      expect(() => new Brain({ url: "http://x" })).toThrow(/BRAIN_TOKEN/);
      expect(() => new Brain({ url: "ftp://x", token: "t" })).toThrow(BrainError);
      process.env.BRAIN_URL = server.url;
      process.env.BRAIN_TOKEN = server.token;
      expect(() => new Brain()).not.toThrow();
    } finally {
      if (saved.url === undefined) delete process.env.BRAIN_URL;
      else process.env.BRAIN_URL = saved.url;
      if (saved.token === undefined) delete process.env.BRAIN_TOKEN;
      else process.env.BRAIN_TOKEN = saved.token;
    }
  });
});

describe("sessions over HTTP", () => {
  it("sends the operator token and the Idempotency-Key, and returns the activation's text", async () => {
    const session = await brain.sessions.create(
      { model: { provider: "scripted", script: [] }, metadata: { app: "test" } },
      { idempotencyKey: "create-1" },
    );
    await expect(session.send("hello", { idempotencyKey: "msg-1" })).resolves.toBe("the answer");
    const [create, message] = server.requests;
    expect(create?.headers.authorization).toBe(`Bearer ${server.token}`);
    expect(create?.headers["idempotency-key"]).toBe("create-1");
    expect(create?.body).toEqual({ model: { provider: "scripted", script: [] }, tools: [], metadata: { app: "test" } });
    expect(message?.body).toEqual({ text: "hello", wait: true });
    expect(message?.headers["idempotency-key"]).toBe("msg-1");
  });

  it("streams events as NDJSON from a cursor", async () => {
    const session = await brain.sessions.get("6f1d8c2e-2b7a-4f4e-9a55-0d8c3b9f6a11");
    const events = [];
    for await (const event of session.events({ after: 1 })) events.push(event);
    expect(events.map((e) => e.sequence)).toEqual([2, 3]);
    expect(events[0]?.payload).toEqual({ text: "é" });
    expect(server.requests.at(-1)?.path).toBe(
      "/v1/sessions/6f1d8c2e-2b7a-4f4e-9a55-0d8c3b9f6a11/events?after=1&follow=false",
    );
  });

  it("turns an error body into a BrainError with its code", async () => {
    await expect(brain.sessions.get("00000000-0000-4000-8000-000000000000")).rejects.toMatchObject({
      code: "not_found",
    });
    const wrong = new Brain({ url: server.url, token: "nope" });
    await expect(wrong.sessions.list()).rejects.toMatchObject({ code: "unauthorized" });
  });

  it("lists, ends and deletes", async () => {
    const page = await brain.sessions.list({ limit: 5 });
    expect(page.sessions).toHaveLength(1);
    expect(server.requests.at(-1)?.path).toBe("/v1/sessions?limit=5");
    const session = page.sessions[0]!;
    expect((await session.end()).status).toBe("ended");
    await expect(session.delete()).resolves.toBeUndefined();
  });

  it("reports a failure without a Brain error body as request_failed", async () => {
    const unreachable = new Brain({ url: "http://127.0.0.1:1", token: "t" });
    await expect(unreachable.sessions.list()).rejects.toMatchObject({ code: "request_failed" });
  });
});

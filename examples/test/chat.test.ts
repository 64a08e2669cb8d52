// The AI SDK's chat protocol over a session (POST /v1/sessions/:id/chat, GET …/chat/stream), read by
// the AI SDK's own client code: in Node through DefaultChatTransport and readUIMessageStream, and in
// headless Chromium through examples/chat (useChat with resume), reloaded mid-stream.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Brain, tool } from "@aexhq/brain";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { expectError, request } from "../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../testkit/brain.js";
import { launchChromium } from "../../testkit/browser.js";
import { type FakeProvider, startFakeOpenAI } from "../../testkit/fake-providers.js";
import { until } from "../../testkit/wait.js";
import { buildChatApp, startChatApp } from "../chat/server.mjs";

let brain: InProcessBrain;
/** A second server on the same database. */
let peer: InProcessBrain;
let openai: FakeProvider;
let client: Brain;
let dist: string;

beforeAll(async () => {
  brain = await startBrain();
  peer = await startBrain({ db: brain.db });
  openai = await startFakeOpenAI();
  client = new Brain({ url: brain.url, token: brain.token });
  dist = await mkdtemp(join(tmpdir(), "brain-chat-"));
  await buildChatApp(dist);
}, 120_000);
afterAll(async () => {
  await client?.close();
  await peer?.close();
  await brain?.close();
  await openai?.close();
  if (dist) await rm(dist, { recursive: true, force: true });
});

const model = () => ({ provider: "openai", name: "gpt-test", apiKey: "sk-chat", baseUrl: openai.url }) as const;

function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

function transport(server: InProcessBrain, sessionId: string) {
  const base = `${server.url}/v1/sessions/${sessionId}`;
  return new DefaultChatTransport({
    api: `${base}/chat`,
    headers: { authorization: `Bearer ${server.token}` },
    prepareReconnectToStreamRequest: () => ({ api: `${base}/chat/stream` }),
  });
}

const userMessage = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

/** The assistant message a UI message stream builds, as useChat would hold it at the end. */
async function lastMessage(stream: ReadableStream<UIMessageChunk>): Promise<UIMessage> {
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream })) last = message;
  return last!;
}

function textOf(message: UIMessage): string {
  return message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
}

async function recordCount(sessionId: string): Promise<number> {
  const [row] = await brain.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM brain.journal WHERE session_id = ${sessionId}`;
  return row!.n;
}

describe("chat protocol", () => {
  it("answers a tool-calling turn as a UI message stream the AI SDK reads", async () => {
    const lookup = tool({
      name: "lookup",
      description: "Looks a word up.",
      input: z.object({ word: z.string() }),
      run: async ({ word }, ctx) => ctx.finish({ meaning: `${word}: a durable thing` }),
    });
    openai.reply(
      { text: "Looking it up.", toolCalls: [{ id: "call_1", name: "lookup", input: { word: "journal" } }] },
      { text: "A journal is a durable thing.", pieceChars: 4 },
    );
    const session = await client.sessions.create({ model: model(), tools: [lookup()] });
    const chunks = await transport(brain, session.id).sendMessages({
      chatId: session.id,
      messages: [userMessage("m1", "what is a journal?")],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const message = await lastMessage(chunks);
    expect(message.role).toBe("assistant");
    const text = message.parts.filter((p) => p.type === "text").map((p) => (p.type === "text" ? p.text : ""));
    expect(text).toEqual(["Looking it up.", "A journal is a durable thing."]);
    const toolPart = message.parts.find((p) => p.type === "dynamic-tool");
    expect(toolPart).toMatchObject({
      toolName: "lookup",
      toolCallId: "call_1",
      state: "output-available",
      input: { word: "journal" },
      output: { meaning: "journal: a durable thing" },
    });
    // The journal holds the message once; posting the same UI message again journals nothing more.
    const before = await recordCount(session.id);
    const asked = openai.requests.length;
    const again = await transport(brain, session.id).sendMessages({
      chatId: session.id,
      messages: [userMessage("m1", "what is a journal?")],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    expect(
      (await lastMessage(again)).parts.filter((p) => p.type === "text").map((p) => (p.type === "text" ? p.text : "")),
    ).toEqual(["Looking it up.", "A journal is a durable thing."]);
    expect(await recordCount(session.id)).toBe(before);
    expect(openai.requests.length).toBe(asked);
  });

  it("resumes the running turn on another server, from its start, then live", async () => {
    const first = "Half of it, ";
    const words = `${first}then the rest.`;
    const release = gate();
    openai.reply({ text: words, pieceChars: 4, hold: { after: 1 + first.length / 4, until: release.promise } });
    const session = await client.sessions.create({ model: model() });
    const answer = session.send("go");
    await until("the model call to start", async () => {
      const [row] = await brain.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM brain.journal WHERE session_id = ${session.id} AND kind = 'model_call_started'`;
      return row!.n > 0;
    });
    const resumed = await transport(peer, session.id).reconnectToStream({ chatId: session.id });
    expect(resumed).not.toBeNull();
    const reader = readUIMessageStream<UIMessage>({ stream: resumed! })[Symbol.asyncIterator]();
    let seen = "";
    await until(
      "the text so far, on the other server",
      async () => {
        const { value } = await reader.next();
        seen = value ? textOf(value) : "";
        return seen === first;
      },
      30_000,
    );
    release.open();
    await expect(answer).resolves.toBe(words);
    let final = seen;
    for (let next = await reader.next(); !next.done; next = await reader.next()) {
      final = textOf(next.value);
    }
    expect(final).toBe(words);
    // Nothing is running now.
    expect((await request(peer, "GET", `/v1/sessions/${session.id}/chat/stream`)).status).toBe(204);
  });

  it("refuses what it cannot journal, and journals nothing of it", async () => {
    const session = await client.sessions.create({ model: model() });
    const before = await recordCount(session.id);
    const path = `/v1/sessions/${session.id}/chat`;
    for (const body of [
      { messages: [] },
      { messages: [{ id: "a", role: "assistant", parts: [{ type: "text", text: "hi" }] }] },
      { messages: [userMessage("u", "again")], trigger: "regenerate-message" },
      { messages: [userMessage("u", "nul \u0000 here")] },
      { messages: [{ id: "u", role: "user", parts: [{ type: "file", url: "data:," }] }] },
      { messages: "not a list" },
    ]) {
      expectError(await request(brain, "POST", path, { body }), "invalid_request");
    }
    expect(await recordCount(session.id)).toBe(before);
    expectError(await request(brain, "GET", `/v1/sessions/${crypto.randomUUID()}/chat/stream`), "not_found");
  });
});

describe("examples/chat in Chromium", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("streams the answer, and a reload mid-stream resumes it to the end", async () => {
    const first = "Tokens arrive one by one, ";
    const words = `${first}and survive a reload.`;
    const release = gate();
    openai.reply({ text: words, pieceChars: 2, hold: { after: 1 + first.length / 2, until: release.promise } });
    const app = await startChatApp({ brain, model: model(), dist });
    const page = await browser.newPage();
    try {
      await page.goto(`${app.url}/new`);
      await page.fill("input[name=text]", "tell me");
      await page.click("button[type=submit]");
      const assistant = page.locator('.message[data-role="assistant"]');
      await assistant.filter({ hasText: first.trim() }).waitFor({ timeout: 30_000 });

      await page.reload();
      // After the reload: the question from the journal, the answer so far from the resumed stream.
      await page.locator('.message[data-role="user"]', { hasText: "tell me" }).waitFor({ timeout: 30_000 });
      await assistant.filter({ hasText: first.trim() }).waitFor({ timeout: 30_000 });
      release.open();
      await assistant.filter({ hasText: words }).waitFor({ timeout: 30_000 });
      expect(await assistant.count()).toBe(1);
      expect(await page.locator('.message[data-role="user"]').count()).toBe(1);
      await page.locator('main[data-status="ready"]').waitFor({ timeout: 30_000 });
    } finally {
      await page.close();
      await app.close();
    }
  });
});

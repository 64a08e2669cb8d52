// Live text: a model call's text reaches the followers that asked for it (`live=true`) while the
// provider streams it, on any server of the database (NOTIFY on the schema's live channel), before
// the call's model_call_ended commits; the committed text stays the truth, and a follower that
// joins mid-call starts with the text so far, without duplicates. `session.stream` yields it.
import { Brain, type TurnStreamPart, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { expectError, request } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { type FakeProvider, startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { journalOf } from "../../../testkit/tool-harness.js";
import { until } from "../../../testkit/wait.js";

let brain: InProcessBrain;
/** A second server on the same database: it hears of the call only through NOTIFY. */
let peer: InProcessBrain;
let openai: FakeProvider;
const clients: Brain[] = [];

beforeAll(async () => {
  brain = await startBrain();
  peer = await startBrain({ db: brain.db });
  openai = await startFakeOpenAI();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await peer?.close();
  await brain?.close();
  await openai?.close();
});

function client(server: InProcessBrain): Brain {
  const c = new Brain({ url: server.url, token: server.token });
  clients.push(c);
  return c;
}

const model = () => ({ provider: "openai", name: "gpt-test", apiKey: "sk-live", baseUrl: openai.url }) as const;

function gate(): { promise: Promise<void>; open(): void } {
  let open = () => {};
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/** Every line of a `GET …/events?…&live=true` stream, parsed, as they arrive. */
async function liveLines(server: InProcessBrain, sessionId: string, after = 0) {
  const abort = new AbortController();
  const res = await fetch(`${server.url}/v1/sessions/${sessionId}/events?after=${after}&follow=true&live=true`, {
    headers: { authorization: `Bearer ${server.token}` },
    signal: abort.signal,
  });
  expect(res.status).toBe(200);
  const lines: Record<string, unknown>[] = [];
  void (async () => {
    let buffered = "";
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      buffered += chunk;
      for (let nl = buffered.indexOf("\n"); nl !== -1; nl = buffered.indexOf("\n")) {
        lines.push(JSON.parse(buffered.slice(0, nl)));
        buffered = buffered.slice(nl + 1);
      }
    }
  })().catch(() => {});
  return { lines, close: () => abort.abort() };
}

const deltasOf = (lines: Record<string, unknown>[]) => lines.filter((l) => l.live === true);
const textOf = (lines: Record<string, unknown>[]) =>
  deltasOf(lines)
    .map((l) => l.text as string)
    .join("");

describe("live text", () => {
  it("reaches a follower on another server before the model call commits", async () => {
    const words = "Streaming, word by word, to a follower elsewhere.";
    const release = gate();
    // The first event and every text piece, then it waits: the call cannot have ended.
    openai.reply({
      text: words,
      pieceChars: 4,
      hold: { after: 1 + Math.ceil(words.length / 4), until: release.promise },
    });
    const session = await client(brain).sessions.create({ model: model() });
    const stream = await liveLines(peer, session.id);
    const turn = session.send("go");

    await until("every piece, live", () => textOf(stream.lines) === words, 30_000);
    const kinds = (await journalOf(brain.db.sql, session.id)).map((r) => r.kind);
    expect(kinds).toContain("model_call_started");
    expect(kinds).not.toContain("model_call_ended");
    const started = stream.lines.find((l) => l.kind === "model_call_started") as { sequence: number };
    let offset = 0;
    for (const d of deltasOf(stream.lines)) {
      expect(d).toEqual({ live: true, kind: "model_text_delta", call: started.sequence, offset, text: d.text });
      offset += (d.text as string).length;
    }
    // Deltas came only after their call's start.
    expect(stream.lines.indexOf(started)).toBeLessThan(stream.lines.indexOf(deltasOf(stream.lines)[0]!));

    release.open();
    await expect(turn).resolves.toBe(words);
    await until("the turn's end", () => stream.lines.some((l) => l.kind === "activation_ended"), 30_000);
    const ended = stream.lines.findIndex((l) => l.kind === "model_call_ended");
    expect(deltasOf(stream.lines.slice(ended))).toEqual([]);
    stream.close();
  });

  it("a follower that joins mid-call starts with the text so far, then the rest, once each", async () => {
    const first = "The first half, ";
    const words = `${first}and the second half.`;
    const release = gate();
    openai.reply({ text: words, pieceChars: 4, hold: { after: 1 + first.length / 4, until: release.promise } });
    const session = await client(brain).sessions.create({ model: model() });
    const early = await liveLines(peer, session.id);
    const turn = session.send("go");
    await until("the first half, live", () => textOf(early.lines) === first, 30_000);

    // A reader that reconnects (here: on the other server) after the call started.
    const started = early.lines.find((l) => l.kind === "model_call_started") as { sequence: number };
    const late = await liveLines(peer, session.id, started.sequence);
    const lateOnBrain = await liveLines(brain, session.id, started.sequence);
    await until(
      "the text so far, to the late readers",
      () => textOf(late.lines) === first && textOf(lateOnBrain.lines) === first,
      30_000,
    );
    expect(deltasOf(late.lines)[0]).toMatchObject({ offset: 0, call: started.sequence });
    release.open();
    await expect(turn).resolves.toBe(words);
    for (const reader of [early, late, lateOnBrain]) {
      await until("the committed call", () => reader.lines.some((l) => l.kind === "model_call_ended"), 30_000);
      // Whatever went out live is a prefix of the committed text, each piece once.
      expect(words.startsWith(textOf(reader.lines))).toBe(true);
      reader.close();
    }
  });

  it("refuses live without follow", async () => {
    const session = await client(brain).sessions.create({ model: model() });
    expectError(await request(brain, "GET", `/v1/sessions/${session.id}/events?live=true`), "invalid_request");
  });
});

describe("session.stream", () => {
  it("yields the text as it streams, the tool calls, each call's committed text and the finish", async () => {
    const lookup = tool({
      name: "lookup",
      description: "Looks a word up.",
      input: z.object({ word: z.string() }),
      run: async ({ word }, ctx) => ctx.finish({ meaning: `${word}!` }),
    });
    // The second answer streams once the first call's result is in the stream: it is surely open.
    const resulted = gate();
    openai.reply(
      { text: "Let me look.", toolCalls: [{ name: "lookup", input: { word: "brain" } }] },
      { text: "A brain is an organ.", pieceChars: 5, chunkDelayMs: 15, hold: { after: 1, until: resulted.promise } },
    );
    const session = await client(peer).sessions.create({ model: model(), tools: [lookup()] });
    const parts: TurnStreamPart[] = [];
    for await (const part of session.stream("what is a brain?")) {
      parts.push(part);
      if (part.type === "tool-result") resulted.open();
    }

    const types = parts.map((p) => p.type);
    expect(types.at(-1)).toBe("finish");
    expect(parts.at(-1)).toMatchObject({ type: "finish", text: "A brain is an organ." });
    const call = parts.find((p) => p.type === "tool-call");
    expect(call).toMatchObject({ tool: "lookup", input: { word: "brain" } });
    const result = parts.find((p) => p.type === "tool-result");
    expect(result).toMatchObject({ status: "ok", value: { meaning: "brain!" } });
    expect(types.indexOf("tool-call")).toBeLessThan(types.indexOf("tool-result"));
    // Each model call's deltas, once each, add up to its committed text.
    const texts = parts.filter((p) => p.type === "text");
    expect(texts.map((t) => t.text)).toEqual(["Let me look.", "A brain is an organ."]);
    for (const t of texts) {
      const deltas = parts.filter((p) => p.type === "text-delta" && p.call === t.call);
      const joined = deltas.map((d) => (d.type === "text-delta" ? d.text : "")).join("");
      expect(t.text.startsWith(joined)).toBe(true);
    }
    const second = texts[1]!.type === "text" ? texts[1]!.call : 0;
    expect(parts.filter((p) => p.type === "text-delta" && p.call === second).length).toBeGreaterThan(1);
  });

  it("throws what send rejects with when the turn fails", async () => {
    openai.reply({ kind: "error", status: 400, message: "no such model" });
    const session = await client(brain).sessions.create({ model: model() });
    const parts: TurnStreamPart[] = [];
    await expect(
      (async () => {
        for await (const part of session.stream("go")) parts.push(part);
      })(),
    ).rejects.toMatchObject({ code: "model_bad_request" });
    expect(parts.some((p) => p.type === "finish")).toBe(false);
  });
});

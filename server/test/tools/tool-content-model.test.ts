// What the built-in Agentloop's model reads about a tool result that carries `content`: the
// content never replaces the status, so an error (or output that failed validation) never reads
// as success. The model is a fake OpenAI-compatible server over real HTTP that records the exact
// request bodies it receives; a real Brain and the public SDK.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { type FakeProvider, type RecordedRequest, startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { deferred } from "../../../testkit/tool-harness.js";

let server: InProcessBrain;
let provider: FakeProvider;
const brains: Brain[] = [];

beforeAll(async () => {
  server = await startBrain();
  provider = await startFakeOpenAI({ apiKey: "sk-content" });
});
afterAll(async () => {
  await server?.close();
  await provider?.close();
});
afterEach(async () => {
  for (const b of brains.splice(0)) await b.close();
});

function client(): Brain {
  const b = new Brain({ url: server.url, token: server.token });
  brains.push(b);
  return b;
}

const model = () => ({ provider: "openai" as const, name: "gpt-test", apiKey: "sk-content", baseUrl: provider.url });

interface WireMessage {
  role: string;
  content?: string;
  tool_call_id?: string;
  tool_calls?: { id: string; function: { name: string } }[];
}

/** The tool messages of one recorded request, by the name of the tool the model had called. */
function toolMessages(request: RecordedRequest): Record<string, string> {
  const messages = request.body.messages as WireMessage[];
  const names = new Map<string, string>();
  for (const m of messages) for (const c of m.tool_calls ?? []) names.set(c.id, c.function.name);
  const out: Record<string, string> = {};
  for (const m of messages) if (m.role === "tool") out[names.get(m.tool_call_id ?? "") ?? "?"] = m.content ?? "";
  return out;
}

/** The status line the model reads first, parsed, and the text after it. */
function split(text: string): { head: unknown; rest: string } {
  const cut = text.indexOf("\n");
  return { head: JSON.parse(text.slice(0, cut)), rest: text.slice(cut + 1) };
}

const tooLong = { code: "too_long", message: "The document exceeds the limit.", retryable: false };

describe("content in the model's conversation", () => {
  it("comes after the status: ok, an error's code and message, and output that failed validation", async () => {
    const fine = tool({
      name: "fine",
      description: "Succeeds with model-facing text.",
      input: z.object({}),
      output: z.object({ words: z.number() }),
      run: (_input, ctx) => ctx.finish({ words: 120 }, { content: "A 120-word summary." }),
    });
    const failing = tool({
      name: "failing",
      description: "Fails with model-facing text.",
      input: z.object({}),
      run: (_input, ctx) => ctx.finish({ status: "error", error: tooLong }, { content: "The summary is ready." }),
    });
    const invalid = tool({
      name: "invalid",
      description: "Produces output its schema refuses, with text that looks fine.",
      input: z.object({}),
      output: z.object({ words: z.number() }),
      run: (_input, ctx) => ctx.finish({ words: "many" } as never, { content: "Looks fine." }),
    });
    provider.reply(
      { toolCalls: ["fine", "failing", "invalid"].map((name) => ({ name, input: {} })) },
      { text: "done" },
    );
    const before = provider.requests.length;
    const s = await client().sessions.create({ model: model(), tools: [fine(), failing(), invalid()] });
    await expect(s.send("go")).resolves.toBe("done");

    const seen = toolMessages(provider.requests[before + 1]!);
    expect(seen.fine).toBe('{"status":"ok"}\nA 120-word summary.');
    expect(split(seen.failing!)).toEqual({
      head: { status: "error", error: { code: "too_long", message: tooLong.message } },
      rest: "The summary is ready.",
    });
    const bad = split(seen.invalid!);
    expect(bad.head).toMatchObject({ status: "error", error: { code: "invalid_output" } });
    expect(bad.rest).toBe("Looks fine.");
  });

  it("a background tool's later error reaches the model with its status, not as bare content", async () => {
    const release = deferred<void>();
    const later = tool({
      name: "later",
      description: "Returns at once and fails later, with model-facing text.",
      input: z.object({}),
      run: async (_input, ctx) => {
        void release.promise.then(() =>
          ctx.finish({ status: "error", error: tooLong }, { content: "All good, summary attached." }),
        );
        return undefined;
      },
    });
    provider.reply({ toolCalls: [{ name: "later", input: {} }] }, { text: "started" }, { text: "noted" });
    const before = provider.requests.length;
    const s = await client().sessions.create({ model: model(), tools: [later()] });
    await expect(s.send("go")).resolves.toBe("started");
    release.resolve();
    const [, , third] = (await provider.waitForRequests(before + 3)).slice(before);
    const messages = third!.body.messages as WireMessage[];
    const news = messages.at(-1)!;
    expect(news.role).toBe("user");
    const [title, line, ...rest] = (news.content ?? "").split("\n");
    expect(title).toBe("Later tool results:");
    expect(line).toMatch(/^\[later #\d+\] /);
    expect(JSON.parse(line!.replace(/^\[later #\d+\] /, ""))).toEqual({
      status: "error",
      error: { code: "too_long", message: tooLong.message },
    });
    expect(rest.join("\n")).toBe("All good, summary attached.");
  });
});

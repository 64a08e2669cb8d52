// Anthropic's extended thinking through a session: the request asks for it with its budget, the
// thinking (text and signature) is journaled with the answer, and the next request of the turn
// sends it back, signed and unchanged, before the tool use it led to, as the API requires.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { expectError, request } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { type FakeProvider, startFakeAnthropic } from "../../../testkit/fake-providers.js";
import { journalOf } from "../../../testkit/tool-harness.js";

let server: InProcessBrain;
let brain: Brain;
let anthropic: FakeProvider;

beforeAll(async () => {
  server = await startBrain();
  brain = new Brain({ url: server.url, token: server.token });
  anthropic = await startFakeAnthropic();
});
afterAll(async () => {
  await brain?.close();
  await server?.close();
  await anthropic?.close();
});

const model = (extra: Record<string, unknown> = {}) =>
  ({
    provider: "anthropic",
    name: "claude-test",
    apiKey: "sk-ant-test",
    baseUrl: anthropic.url,
    thinking: { budgetTokens: 2048 },
    ...extra,
  }) as const;

describe("extended thinking", () => {
  it("is journaled with the answer and sent back, signed, with the tool results", async () => {
    const add = tool({
      name: "add",
      description: "Adds two numbers.",
      input: z.object({ a: z.number(), b: z.number() }),
      run: async ({ a, b }, ctx) => ctx.finish({ sum: a + b }),
    });
    anthropic.reply(
      {
        thinking: { text: "I should add them with the tool.", signature: "sig-AAAA" },
        toolCalls: [{ id: "toolu_1", name: "add", input: { a: 2, b: 3 } }],
      },
      { thinking: { text: "The sum is 5.", signature: "sig-BBBB" }, text: "2 + 3 = 5." },
    );
    const before = anthropic.requests.length;
    const session = await brain.sessions.create({ model: model(), tools: [add()] });
    await expect(session.send("what is 2 + 3?")).resolves.toBe("2 + 3 = 5.");

    const [first, second] = anthropic.requests.slice(before);
    expect(first!.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    // No maxTokens configured: the budget plus the default, so the answer has room past the thinking.
    expect(first!.body.max_tokens).toBe(2048 + 4096);
    const assistant = second!.body.messages.find((m: { role: string }) => m.role === "assistant");
    expect(assistant.content.map((b: { type: string }) => b.type)).toEqual(["thinking", "tool_use"]);
    expect(assistant.content[0]).toEqual({
      type: "thinking",
      thinking: "I should add them with the tool.",
      signature: "sig-AAAA",
    });

    const ended = (await journalOf(server.db.sql, session.id)).filter((r) => r.kind === "model_call_ended");
    expect(ended.map((r) => (r.payload.response as { thinking?: unknown }).thinking)).toEqual([
      [{ type: "thinking", thinking: "I should add them with the tool.", signature: "sig-AAAA" }],
      [{ type: "thinking", thinking: "The sum is 5.", signature: "sig-BBBB" }],
    ]);
    expect((ended[0]!.payload.response as { reasoning?: string }).reasoning).toBe("I should add them with the tool.");
  });

  it("refuses a budget under 1024 tokens, or a maxTokens that leaves no room past it", async () => {
    for (const extra of [{ thinking: { budgetTokens: 100 } }, { maxTokens: 2048 }]) {
      expectError(await request(server, "POST", "/v1/sessions", { body: { model: model(extra) } }), "invalid_request");
    }
  });
});

// Live text at the provider seam: each piece of the answer's text, as the stream carries it, goes
// to the caller's onText in order; together they are the answer's text, and nothing else (not the
// reasoning, not tool arguments) goes there.
import { describe, expect, it } from "vitest";
import { context, type Flavor, fakeProviderSuite, hello } from "./providers-support.js";

describe.each<Flavor>(["openai", "anthropic"])("%s streamed text", (flavor) => {
  const { fake, model } = fakeProviderSuite(flavor);

  it("hands every piece to onText, in order, adding up to the answer's text", async () => {
    fake.reply({ text: "pieces of a streamed answer", pieceChars: 3, toolCalls: [{ name: "x", input: { a: 1 } }] });
    const pieces: string[] = [];
    const answer = await model().complete(hello, { ...context(), onText: (t) => pieces.push(t) });
    expect(answer.text).toBe("pieces of a streamed answer");
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.join("")).toBe(answer.text);
  });

  it("a JSON answer (no stream) calls onText never; the text is in the answer", async () => {
    fake.reply({ text: "all at once", json: true });
    const pieces: string[] = [];
    const answer = await model().complete(hello, { ...context(), onText: (t) => pieces.push(t) });
    expect(answer.text).toBe("all at once");
    expect(pieces).toEqual([]);
  });
});

describe("openai streamed text", () => {
  const { fake, model } = fakeProviderSuite("openai");
  it("keeps the reasoning out of onText", async () => {
    fake.reply({ text: "answer", reasoning: "thinking first" });
    const pieces: string[] = [];
    const answer = await model().complete(hello, { ...context(), onText: (t) => pieces.push(t) });
    expect(answer.reasoning).toBe("thinking first");
    expect(pieces.join("")).toBe("answer");
  });
});

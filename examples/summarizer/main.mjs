// The seed's document summarizer: a tool that makes its own, independent model call (ctx.model)
// and returns a structured result with model-facing `content`.
// Run: npm run example -- summarizer   (starts a Brain for you unless BRAIN_URL and BRAIN_TOKEN are set)
// Offline by default (the scripted provider answers); with OPENAI_API_KEY set it uses OpenAI (or
// any OpenAI-compatible server at OPENAI_BASE_URL) for both the Agentloop and the tool.
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

const documents = new Map([
  [
    "rfc-001",
    "Brain journals every session in Postgres: messages, model calls, tool calls and their results, " +
      "in order. Tools run in the application, in WebAssembly components or behind HTTP, and Brain " +
      "sends each invocation once, recording timeouts, cancellations and lost connections honestly.",
  ],
]);

export const summarize = tool({
  name: "summarize_document",
  description: "Summarise one document in a sentence.",
  input: z.object({ documentId: z.string() }),
  output: z.object({ documentId: z.string(), summary: z.string(), inputTokens: z.number() }),
  run: async ({ documentId }, ctx) => {
    const text = documents.get(documentId);
    if (text === undefined) {
      const error = { code: "not_found", message: `No document ${documentId}.`, retryable: false };
      return ctx.finish({ status: "error", error }, { content: `There is no document ${documentId}.` });
    }
    // Independent of the conversation: explicit messages, the session's provider and budget.
    const result = await ctx.model({
      system: "Summarise the document in one sentence.",
      messages: [{ role: "user", content: text }],
    });
    return ctx.finish(
      { documentId, summary: result.text, inputTokens: result.usage.inputTokens },
      { content: `Summary of ${documentId}: ${result.text}` },
    );
  },
});

const model = process.env.OPENAI_API_KEY
  ? {
      provider: "openai",
      name: process.env.OPENAI_MODEL ?? "gpt-4.1-mini",
      apiKey: process.env.OPENAI_API_KEY,
      ...(process.env.OPENAI_BASE_URL ? { baseUrl: process.env.OPENAI_BASE_URL } : {}),
    }
  : {
      provider: "scripted",
      script: [
        { toolCalls: [{ name: "summarize_document", input: { documentId: "rfc-001" } }] },
        { text: "RFC 001 says Brain keeps an ordered, durable journal of every session in Postgres." },
      ],
      toolScript: [{ text: "Brain records each session's work in Postgres and runs each tool call once." }],
    };

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({ model, tools: [summarize()] });
  console.log(await session.send("Summarise document rfc-001 for me."));
  for await (const e of session.events({ after: 0, follow: false })) {
    console.log(e.sequence, e.kind, JSON.stringify(e.payload));
  }
  console.log(
    `\nThe tool's own model call in SQL:\n  SELECT seq, kind, payload->'origin' AS origin, payload->'usage' AS usage FROM brain.journal WHERE session_id = '${session.id}' AND kind LIKE 'model_call_%' ORDER BY seq;`,
  );
} finally {
  await brain.close();
}

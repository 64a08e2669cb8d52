// examples/summarizer as a user runs it: a spawned Brain server and the example as its own process.
import { describe, expect, it } from "vitest";
import { spawnBrain } from "../../testkit/brain.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { runExample, storedJournal } from "./support.js";

const brain = startedBeforeAll(() => spawnBrain());

describe("examples/summarizer", () => {
  it("summarises with ctx.model: the tool's model call is journaled with its origin, the result carries content", async () => {
    const { lines, sessionId } = await runExample(brain, "examples/summarizer/main.mjs", {
      OPENAI_API_KEY: undefined,
    });
    expect(lines[0]).toBe("RFC 001 says Brain keeps an ordered, durable journal of every session in Postgres.");
    const rows = await storedJournal(brain.db, sessionId);
    const call = rows.find((r) => r.kind === "tool_call_started")!;
    const toolModel = rows.filter(
      (r) => r.kind.startsWith("model_call_") && (r.payload.origin as { type?: string } | undefined)?.type === "tool",
    );
    expect(toolModel.map((r) => r.kind)).toEqual(["model_call_started", "model_call_ended"]);
    expect(toolModel[0]!.payload.origin).toEqual({ type: "tool", sessionId, sequence: call.seq });
    const summary = "Brain records each session's work in Postgres and runs each tool call once.";
    const result = rows.find((r) => r.kind === "tool_result")!;
    expect(result.payload).toEqual({
      call: call.seq,
      outcome: { status: "ok", value: { documentId: "rfc-001", summary, inputTokens: 0 } },
      content: `Summary of rfc-001: ${summary}`,
    });
    // The model's answer is journaled before the tool's result that used it.
    expect(toolModel[1]!.seq).toBeLessThan(result.seq);
  }, 60_000);
});

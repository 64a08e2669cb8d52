// HTTP Environments answer with text from outside. A NUL character or an unpaired surrogate in an
// answer never leaves a call open or an operation unanswered: an ok value that cannot be stored is
// `invalid_output` (for ctx.environments.call as for a placed tool), and an error body quoted into
// an outcome is made storable (U+FFFD), so the failure is still recorded as what it was.
import { type BrainError, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { githubEnv, journalOf, startFakeApi } from "./environments-support.js";

const stack = startedBeforeAll(() => startBrainWithWorker());
const api = startedBeforeAll(() =>
  startFakeApi((r) =>
    r.path === "/nul"
      ? { text: '{"t":"a\\u0000b","k":"\\ud800"}', contentType: "application/json" }
      : r.path === "/fail-nul"
        ? { status: 500, text: "bad\u0000body", contentType: "text/plain" }
        : { json: { fine: 1 } },
  ),
);

const get = (path: string) => ({ descriptor: { type: "http_json", method: "GET", path }, input: {} });

const caller = tool({
  name: "caller",
  description: "Calls its Environment.",
  input: z.object({}),
  run: async (_input, ctx) => {
    const results: unknown[] = [];
    for (const path of ["/nul", "/fail-nul", "/fine"]) {
      results.push(
        await ctx.environments.call("github", get(path)).then(
          (value) => value,
          (e: BrainError) => ({ code: e.code, message: e.message, details: e.details }),
        ),
      );
    }
    return ctx.finish({ results } as never);
  },
});

const placed = (path: string) =>
  tool({ name: "t", description: "d", input: z.object({}), implementation: () => get(path).descriptor })({
    env: githubEnv(api),
  });

async function runOnce(tools: Parameters<typeof stack.client.sessions.create>[0]["tools"], name: string) {
  const session = await stack.client.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name, input: {} }] }, { text: "done" }] },
    tools,
    environmentControl: { operations: ["call"] },
  });
  expect(await session.send("go")).toBe("done");
  const journal = await journalOf(stack.brain.db.sql, session.id);
  return journal.find((r) => r.kind === "tool_call_ended")!.payload.outcome as {
    status: string;
    value?: { results: { code?: string; message?: string; details?: { body?: string } }[] };
    error?: { code: string; message: string; details?: { body?: string } };
  };
}

describe("ctx.environments.call", () => {
  it("an unstorable ok answer is invalid_output, an unstorable error body is made storable", async () => {
    const outcome = await runOnce([caller(), placed("/fine")], "caller");
    const [nul, failNul, fine] = outcome.value!.results;
    expect(nul).toMatchObject({ code: "invalid_output" });
    expect(nul!.message).toMatch(/cannot be stored/);
    expect(failNul).toMatchObject({ code: "http_error" });
    expect(failNul!.details?.body).toBe("bad\ufffdbody");
    expect(fine).toEqual({ fine: 1 });
  });
});

describe("a placed HTTP Environment tool", () => {
  it("an unstorable ok answer ends the call invalid_output at once", async () => {
    const outcome = await runOnce([placed("/nul")], "t");
    expect(outcome.error?.code).toBe("invalid_output");
    expect(outcome.error?.message).toMatch(/cannot be stored/);
  });

  it("an error body with NUL is still recorded as http_error, its excerpt made storable", async () => {
    const outcome = await runOnce([placed("/fail-nul")], "t");
    expect(outcome.error?.code).toBe("http_error");
    expect(outcome.error?.details?.body).toBe("bad\ufffdbody");
  });
});

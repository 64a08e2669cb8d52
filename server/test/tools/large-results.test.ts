// Results have no size limit of their own, only the activation's BRAIN_MAX_EMITTED_BYTES budget
// (1 MiB here): over the host socket a result larger than one frame travels as parts and is
// journaled intact, in its place among the call's frames. A result the budget refuses ends the
// call `budget_exceeded` at once, journaled, with the refusal visible to the tool: nothing is left
// open waiting for a deadline.
import { type BrainError, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { deferred } from "../../../testkit/wait.js";
import { journalOf } from "../environments/environments-support.js";
import { bigText } from "./big-text.js";

const MiB = 1024 * 1024;

const TEXT = bigText(900 * 1024);

const stack = startedBeforeAll(() => startBrainWithWorker());

async function run(tools: Parameters<typeof stack.client.sessions.create>[0]["tools"], name: string) {
  const session = await stack.client.sessions.create({
    model: { provider: "scripted", script: [{ toolCalls: [{ name, input: {} }] }, { text: "done" }] },
    tools,
  });
  expect(await session.send("go")).toBe("done");
  return journalOf(stack.brain.db.sql, session.id);
}

function ended(journal: Awaited<ReturnType<typeof journalOf>>) {
  return journal.find((r) => r.kind === "tool_call_ended")!.payload.outcome!;
}

describe("a result up to the budget, over the host socket", () => {
  it("a ~900 KiB returned result is journaled intact", async () => {
    const big = tool({ name: "big", description: "d", input: z.object({}), run: async () => ({ text: TEXT }) });
    const journal = await run([big()], "big");
    const result = journal.find((r) => r.kind === "tool_result")!;
    expect(result.payload.outcome).toEqual({ status: "ok", value: { text: TEXT } });
    // Returning ends the synchronous phase; the call stays open for more until it finishes.
    expect(journal.some((r) => r.kind === "tool_returned")).toBe(true);
  });

  it("keeps its place among the call's frames, and finish waits for it", async () => {
    const ordered = tool({
      name: "ordered",
      description: "d",
      input: z.object({}),
      run: async (_input, ctx) => {
        // Not awaited: admission order is wire order, however large a frame is.
        void ctx.emit("before", { n: 1 });
        void ctx.emitResult({ text: bigText(400 * 1024) });
        void ctx.emit("after", { n: 2 });
        return ctx.finish({ text: bigText(300 * 1024) });
      },
    });
    const journal = await run([ordered()], "ordered");
    const call = journal.find((r) => r.kind === "tool_call_started")!.seq;
    const kinds = journal.filter((r) => r.seq > call).map((r) => r.kind);
    expect(kinds.slice(0, 5)).toEqual(["before", "tool_result", "after", "tool_result", "tool_call_ended"]);
    const results = journal.filter((r) => r.kind === "tool_result").map((r) => r.payload.outcome);
    expect(results).toEqual([
      { status: "ok", value: { text: bigText(400 * 1024) } },
      { status: "ok", value: { text: bigText(300 * 1024) } },
    ]);
  });
});

describe("a result the budget refuses ends the call budget_exceeded", () => {
  it("finish: ctx.finish rejects, the call ends at once, the refusal is journaled", async () => {
    const seen = deferred<string>();
    const over = tool({
      name: "over",
      description: "d",
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.emitResult({ text: TEXT });
        // 900 KiB admitted; 300 KiB more passes the 1 MiB budget.
        const code = await ctx.finish({ text: bigText(300 * 1024) }).then(
          () => "resolved",
          (e: BrainError) => e.code,
        );
        seen.resolve(code);
      },
    });
    const journal = await run([over()], "over");
    expect(await seen.promise).toBe("budget_exceeded");
    expect(ended(journal)).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    expect(journal.find((r) => r.kind === "emission_rejected")?.payload).toMatchObject({
      kind: "tool_result",
      code: "budget_exceeded",
    });
  });

  it("return: the call ends, and ctx.signal aborts with the refusal (it is not swallowed)", async () => {
    const reason = deferred<unknown>();
    const over = tool({
      name: "over_return",
      description: "d",
      input: z.object({}),
      run: async (_input, ctx) => {
        ctx.signal.addEventListener("abort", () => reason.resolve(ctx.signal.reason));
        return { text: bigText(1.5 * MiB) };
      },
    });
    const journal = await run([over()], "over_return");
    expect(await reason.promise).toMatchObject({ name: "BrainError", code: "budget_exceeded" });
    expect(ended(journal)).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    expect(journal.some((r) => r.kind === "emission_rejected")).toBe(true);
  });

  it("a result far past anything the budget admits is not collected: refused as its parts arrive", async () => {
    const seen = deferred<string>();
    const huge = tool({
      name: "huge",
      description: "d",
      input: z.object({}),
      run: async (_input, ctx) => {
        const code = await ctx.finish({ text: "x".repeat(4 * MiB) }).then(
          () => "resolved",
          (e: BrainError) => e.code,
        );
        seen.resolve(code);
      },
    });
    const journal = await run([huge()], "huge");
    expect(await seen.promise).toBe("budget_exceeded");
    expect(ended(journal)).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    const rejected = journal.find((r) => r.kind === "emission_rejected")!.payload as { bytes: number };
    expect(rejected.bytes).toBeGreaterThan(MiB);
    // The host socket carried on: the next call on it works.
    const small = tool({
      name: "small",
      description: "d",
      input: z.object({}),
      run: async (_input, ctx) => ctx.finish({ ok: 1 }),
    });
    expect(ended(await run([small()], "small"))).toEqual({ status: "ok", value: { ok: 1 } });
  });
});

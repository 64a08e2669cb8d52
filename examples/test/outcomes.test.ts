// The outcomes example as a user runs it (a Brain server process, the example its own process):
// every outcome rule of the Tool API, checked in the journal it prints and the one Postgres holds.
import { expect, it } from "vitest";
import { spawnBrain } from "../../testkit/brain.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { type JournalRecord, printedJournal, runExample, storedJournal } from "./support.js";

const brain = startedBeforeAll(() => spawnBrain());

/** Each tool's own records after its tool_call_started: kind and outcome, in journal order. */
function byTool(journal: JournalRecord[]): Record<string, [string, unknown][]> {
  const names = new Map<number, string>();
  const out: Record<string, [string, unknown][]> = {};
  for (const r of journal) {
    if (r.kind === "tool_call_started") names.set(r.seq, r.payload.tool as string);
    const tool = names.get(r.payload.call as number);
    if (!tool || !r.kind.startsWith("tool_")) continue;
    out[tool] ??= [];
    out[tool].push([r.kind, r.payload.outcome]);
  }
  return out;
}

it("records every outcome rule as the Tool API states it", async () => {
  const { lines, sessionId, out } = await runExample(brain, "examples/outcomes/main.mjs");
  const printed = printedJournal(lines);
  expect(printed).toEqual(await storedJournal(brain.db, sessionId));
  const ok = (value: unknown) => ({ status: "ok", value });
  const quota = {
    status: "error",
    error: { code: "quota_exceeded", message: "10 requests per minute", retryable: true, details: { limit: 10 } },
  };
  const calls = byTool(printed);
  // Ordinary output, returned: one result, the synchronous phase over, the call open until the session ended.
  expect(calls.ordinary).toEqual([
    ["tool_result", ok({ status: "shipped", items: [1, 2] })],
    ["tool_returned", undefined],
    ["tool_call_ended", { status: "cancelled", cause: "session_ended" }],
  ]);
  // An explicit ok outcome's value is data even with a reserved status.
  const justData = ok({ status: "error", note: "just data" });
  expect(calls.explicit_ok).toEqual([
    ["tool_result", justData],
    ["tool_call_ended", justData],
  ]);
  expect(calls.error_outcome).toEqual([
    ["tool_result", quota],
    ["tool_returned", undefined],
    ["tool_call_ended", quota],
  ]);
  const thrown = { status: "error", error: { code: "tool_error", message: "the backend is down" } };
  expect(calls.throws).toEqual([
    ["tool_result", thrown],
    ["tool_call_ended", thrown],
  ]);
  expect(calls.malformed?.at(-1)).toMatchObject([
    "tool_call_ended",
    { status: "error", error: { code: "invalid_output", message: "The error outcome envelope is malformed." } },
  ]);
  const notJson = {
    status: "error",
    error: { code: "invalid_output", message: "The output is not plain JSON at $.at.", details: { path: "$.at" } },
  };
  expect(calls.non_json).toEqual([
    ["tool_result", notJson],
    ["tool_returned", undefined],
    ["tool_call_ended", notJson],
  ]);
  expect(calls.slow).toEqual([["tool_call_ended", { status: "timeout", cause: "deadline" }]]);
  expect(out).toContain("slow: signal aborted, Brain records timeout");
  // Return, then a result and finish after the turn: a new activation shows it to the model.
  expect(calls.background).toEqual([
    ["tool_result", ok({ accepted: true })],
    ["tool_returned", undefined],
    ["tool_result", ok({ progress: 100 })],
    ["tool_call_ended", ok({ progress: 100 })],
  ]);
  expect(calls.lingering?.at(-1)).toEqual(["tool_call_ended", { status: "cancelled", cause: "sdk_cancel" }]);
  expect(out).toContain("lingering: signal aborted, Brain records cancelled");
  const activations = printed.filter((r) => r.kind === "activation_ended").map((r) => r.payload.text);
  expect(activations).toEqual(["done", "saw the background result", "saw the cancellation"]);
}, 60_000);

// No SDK stands between a component and Brain, so the worker applies the tool's advertised
// schemas as the SDK does for a host tool: input that fails the input schema is `invalid_input`
// and the component never runs; the input's JSON-Schema defaults are filled in before `run`; ok
// results (emitted or finished) that fail the output schema are `invalid_output`, extra
// properties of a closed object are stripped as zod's parse strips them, and non-success outcomes
// bypass output validation.
import { describe, expect, it } from "vitest";
import {
  answersOf,
  callComponent,
  callRecords,
  harnessForTests,
  scriptSession,
  waitForEnd,
  workerForTests,
} from "./support.js";

const h = harnessForTests();
workerForTests(h);

// What zod's io:"input" export of z.object({ steps: z.array(z.any()), mode: z.string().default("quiet") }) says.
const inputSchema = {
  type: "object",
  properties: { steps: { type: "array" }, mode: { type: "string", default: "quiet" } },
  required: ["steps"],
  additionalProperties: false,
};
// z.object({ answers: z.array(z.any()) }) as output, and a plain value for `result` steps.
const outputSchema = {
  anyOf: [
    { type: "object", properties: { answers: { type: "array" } }, required: ["answers"], additionalProperties: false },
    { type: "object", properties: { n: { type: "integer" } }, required: ["n"], additionalProperties: false },
  ],
};
const session = scriptSession(h, { inputSchema, outputSchema });

describe("component input", () => {
  it("input failing the schema is invalid_input, and the component never runs", async () => {
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "emit", kind: "ran", data: null }, { op: "finish" }], mode: 7 },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome).toMatchObject({ status: "error", error: { code: "invalid_input" } });
    expect(JSON.stringify(row.outcome)).toContain("/mode");
    // Not one record of the component's: it did not run.
    expect((await callRecords(h.db.sql, session, seq)).map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
  });

  it("the component receives its input with the schema's defaults applied", async () => {
    const seq = await callComponent(h, session, { input: { steps: [{ op: "input" }, { op: "finish-answers" }] } });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome?.status).toBe("ok");
    expect(answersOf(row)[1]!.ok).toEqual({ steps: [{ op: "input" }, { op: "finish-answers" }], mode: "quiet" });
  });
});

describe("component output", () => {
  it("a finished value failing the output schema is journaled invalid_output, not ok", async () => {
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "finish", outcome: { status: "ok", value: { n: "not a number" } } }] },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome).toMatchObject({ status: "error", error: { code: "invalid_output" } });
    const records = await callRecords(h.db.sql, session, seq);
    expect(records.some((r) => JSON.stringify(r.payload).includes("not a number"))).toBe(false);
  });

  it("an emitted result failing the output schema ends the call invalid_output", async () => {
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "result", outcome: { status: "ok", value: [1, 2] } }, { op: "finish" }] },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome).toMatchObject({ status: "error", error: { code: "invalid_output" } });
    expect((await callRecords(h.db.sql, session, seq)).map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
  });

  it("a valid value is journaled ok, with undeclared properties stripped as zod's parse would", async () => {
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "finish", outcome: { status: "ok", value: { n: 3, extra: true } } }] },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome).toEqual({ status: "ok", value: { n: 3 } });
  });

  it("a non-success outcome bypasses output validation", async () => {
    const error = { code: "not_found", message: "no such thing" };
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "finish", outcome: { status: "error", error } }] },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome).toEqual({ status: "error", error });
  });
});

describe("a trap", () => {
  it("carries the component's own error message, with the trap kept in its details", async () => {
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "noisy-trap", message: "the ledger is closed" }] },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome?.error?.code).toBe("component_trap");
    expect(row.outcome?.error?.message).toBe("the ledger is closed");
    expect(row.outcome?.error?.details).toMatchObject({ trap: expect.stringContaining("unreachable") });
  });
});

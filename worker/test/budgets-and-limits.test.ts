// The activation's emission budget and the frame size bound, for components: the same rules, and
// the same records, as for host tools.
import { MAX_FRAME_BYTES } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import {
  answersOf,
  callComponent,
  callRecords,
  harnessForTests,
  scriptSession,
  startActivation,
  telemetryAnswers,
  waitForEnd,
  workerForTests,
} from "./support.js";

const BUDGET = 400;

const h = harnessForTests();
const session = scriptSession(h);

describe("budget", () => {
  workerForTests(h, { maxEmittedBytes: BUDGET });

  it("refuses the emission that would pass the budget, journals emission_rejected, and goes on", async () => {
    const seq = await callComponent(h, session, {
      input: {
        steps: [
          { op: "emit", kind: "small", data: "x".repeat(100) },
          { op: "emit", kind: "large", data: "x".repeat(BUDGET) },
          { op: "emit", kind: "small", data: "y" },
          { op: "telemetry-answers" },
          { op: "finish" },
        ],
      },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    const records = await callRecords(h.db.sql, session, seq);
    expect(records.map((r) => r.kind)).toEqual(["small", "emission_rejected", "small", "tool_call_ended"]);
    const rejected = records[1]!.payload;
    expect(rejected).toMatchObject({ call: seq, kind: "large", code: "budget_exceeded" });
    expect(rejected.bytes).toBe(Buffer.byteLength("large") + BUDGET + 2);
    expect(row.outcome).toEqual({ status: "ok" });
  });

  it("is shared by every call of one activation", async () => {
    const activation = await startActivation(h, session);
    const first = await callComponent(h, session, {
      activation,
      input: { steps: [{ op: "emit", kind: "fill", data: "x".repeat(300) }, { op: "finish" }] },
    });
    await waitForEnd(h.db.sql, session, first);
    const second = await callComponent(h, session, {
      activation,
      input: { steps: [{ op: "result", outcome: { status: "ok", value: "x".repeat(150) } }, { op: "finish" }] },
    });
    await waitForEnd(h.db.sql, session, second);
    const records = await callRecords(h.db.sql, session, second);
    // The result was refused (kind tool_result), so the call ended with no result at all.
    expect(records.map((r) => r.kind)).toEqual(["emission_rejected", "tool_call_ended"]);
    expect(records[0]!.payload).toMatchObject({ kind: "tool_result", code: "budget_exceeded" });
  });
});

describe("frame size", () => {
  // A worker without a small budget (the budget suite's has stopped): here only the frame bound matters.
  const { log } = workerForTests(h);
  const big = scriptSession(h);

  it("an oversize result passed to finish becomes result_too_large", async () => {
    const seq = await callComponent(h, big, { input: { steps: [{ op: "big", bytes: MAX_FRAME_BYTES }] } });
    const row = await waitForEnd(h.db.sql, big, seq);
    expect(row.outcome?.status).toBe("error");
    expect(row.outcome?.error?.code).toBe("result_too_large");
    expect(row.outcome?.error?.details).toMatchObject({ limit: MAX_FRAME_BYTES });
    const records = await callRecords(h.db.sql, big, seq);
    expect(records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
  });

  it("an oversize emit-result becomes result_too_large and ends the call; the component is told", async () => {
    const seq = await callComponent(h, big, {
      input: { steps: [{ op: "big-result", bytes: MAX_FRAME_BYTES }, { op: "telemetry-answers" }] },
    });
    const row = await waitForEnd(h.db.sql, big, seq);
    expect(row.outcome?.error?.code).toBe("result_too_large");
    const answers = await telemetryAnswers(log, seq);
    expect(answers[1]!.err).toMatch(/^result_too_large: /);
  });

  it("an oversize emit is refused with frame_too_large and writes nothing", async () => {
    const seq = await callComponent(h, big, {
      input: { steps: [{ op: "big-emit", bytes: MAX_FRAME_BYTES }, { op: "finish-answers" }] },
    });
    const row = await waitForEnd(h.db.sql, big, seq);
    const answers = answersOf(row);
    expect(answers[1]!.err).toMatch(/^frame_too_large: /);
    expect((await callRecords(h.db.sql, big, seq)).map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
  });

  it("a result just under the bound passes", async () => {
    const seq = await callComponent(h, big, { input: { steps: [{ op: "big", bytes: MAX_FRAME_BYTES - 300 }] } });
    const row = await waitForEnd(h.db.sql, big, seq);
    expect(row.outcome?.status).toBe("ok");
  });
});

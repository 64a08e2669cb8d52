// The activation's emission budget and the frame size bound, for components: the same rules, and
// the same records, as for host tools. A result's only bound is the budget; an event's is a frame.
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
  const { log } = workerForTests(h, { maxEmittedBytes: BUDGET });

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
    // The result was refused (kind tool_result): the call cannot go on without its answer, so it
    // ended at once with Brain's budget_exceeded in its place.
    expect(records.map((r) => r.kind)).toEqual(["emission_rejected", "tool_result", "tool_call_ended"]);
    expect(records[0]!.payload).toMatchObject({ kind: "tool_result", code: "budget_exceeded" });
    expect(records[1]!.payload.outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
  });

  it("a refused finish ends the call budget_exceeded and the component is told", async () => {
    log.lines.length = 0; // telemetryAnswers reads the latest answers
    const seq = await callComponent(h, session, {
      input: { steps: [{ op: "big", bytes: BUDGET }, { op: "telemetry-answers" }] },
    });
    const row = await waitForEnd(h.db.sql, session, seq);
    expect(row.outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    const records = await callRecords(h.db.sql, session, seq);
    expect(records.map((r) => r.kind)).toEqual(["emission_rejected", "tool_result", "tool_call_ended"]);
    expect((await telemetryAnswers(log, seq))[1]!.err).toMatch(/^budget_exceeded: /);
  });
});

describe("result size", () => {
  // A worker with the default 1 MiB budget (the budget suite's has stopped).
  const { log } = workerForTests(h);
  const big = scriptSession(h);
  const BIG = 900 * 1024;

  it("a ~900 KiB result passed to finish is journaled intact", async () => {
    const seq = await callComponent(h, big, { input: { steps: [{ op: "big", bytes: BIG }] } });
    const row = await waitForEnd(h.db.sql, big, seq);
    expect(row.outcome).toEqual({ status: "ok", value: "x".repeat(BIG) });
    const records = await callRecords(h.db.sql, big, seq);
    expect(records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
    expect(records[0]!.payload.outcome).toEqual({ status: "ok", value: "x".repeat(BIG) });
  });

  it("a ~900 KiB emit-result is journaled intact and the call goes on", async () => {
    const seq = await callComponent(h, big, {
      input: { steps: [{ op: "big-result", bytes: BIG }, { op: "finish" }] },
    });
    const row = await waitForEnd(h.db.sql, big, seq);
    expect(row.outcome).toEqual({ status: "ok", value: "x".repeat(BIG) });
    const records = await callRecords(h.db.sql, big, seq);
    expect(records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
  });

  it("a result past the budget ends the call budget_exceeded; the component is told", async () => {
    log.lines.length = 0; // telemetryAnswers reads the latest answers
    const seq = await callComponent(h, big, {
      input: { steps: [{ op: "big-result", bytes: 1024 * 1024 }, { op: "telemetry-answers" }] },
    });
    const row = await waitForEnd(h.db.sql, big, seq);
    expect(row.outcome?.error?.code).toBe("budget_exceeded");
    const answers = await telemetryAnswers(log, seq);
    expect(answers[1]!.err).toMatch(/^budget_exceeded: /);
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
});

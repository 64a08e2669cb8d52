// Every host function of brain:tool/host, run by a real worker on a real component (built from
// worker/test/fixtures/script.js), through pg-boss, with the journal records each one writes.
import { endCalls } from "@aexhq/brain-db/ops";
import { describe, expect, it } from "vitest";
import { until } from "../../testkit/wait.js";
import {
  answersOf,
  type CallRow,
  callComponent,
  callRecords,
  type JournalRecord,
  scriptWorker,
  telemetryAnswers,
  waitForEnd,
} from "./support.js";

const { h, log, session } = scriptWorker({
  session: {
    options: { depth: 2 },
    model: { provider: "scripted", script: [], toolScript: [{ text: "from the model" }] },
  },
  // Scripts go on after their call ended (to show what is refused then): on a loaded machine the
  // default second of grace before such a component is stopped was not always enough to get there.
  worker: { afterEndGraceMs: 15_000 },
});

type Step = Record<string, unknown> & { op: string };

/** Runs a script to its end; returns the call's row and its records (kind, payload). */
async function script(steps: Step[]): Promise<{ seq: number; row: CallRow; records: JournalRecord[] }> {
  const seq = await callComponent(h, session, { input: { steps } });
  const row = await waitForEnd(h.db.sql, session, seq);
  return { seq, row, records: await callRecords(h.db.sql, session, seq) };
}

const kinds = (records: JournalRecord[]) => records.map((r) => r.kind);

describe("emit", () => {
  it("appends an extension event and returns its committed sequence", async () => {
    const { row, records } = await script([
      { op: "emit", kind: "progress", data: { step: 1 } },
      { op: "emit", kind: "progress.detail", data: [1, "two"] },
      { op: "finish-answers" },
    ]);
    expect(kinds(records)).toEqual(["progress", "progress.detail", "tool_result", "tool_call_ended"]);
    expect(records[0]!.payload.data).toEqual({ step: 1 });
    expect(records[1]!.payload.data).toEqual([1, "two"]);
    // The sequences the component got are those of the committed records, in order.
    expect(answersOf(row).slice(1)).toEqual([{ ok: records[0]!.seq }, { ok: records[1]!.seq }]);
  });

  it("refuses reserved and malformed kinds, and data that is not JSON, writing nothing", async () => {
    const { row, records } = await script([
      { op: "emit", kind: "tool_result", data: 1 },
      { op: "emit", kind: "brain.internal", data: 1 },
      { op: "emit", kind: "Bad Kind", data: 1 },
      { op: "emit-raw", kind: "progress", text: "{not json" },
      { op: "finish-answers" },
    ]);
    const [, reserved, brain, invalid, notJson] = answersOf(row);
    expect(reserved!.err).toMatch(/^reserved_kind: /);
    expect(brain!.err).toMatch(/^reserved_kind: /);
    expect(invalid!.err).toMatch(/^invalid_kind: /);
    expect(notJson!.err).toMatch(/^invalid_frame: /);
    expect(kinds(records)).toEqual(["tool_result", "tool_call_ended"]);
  });
});

describe("emit-result, returned, finish", () => {
  it("emit-result appends a result and keeps the call open; finish then ends it with that outcome", async () => {
    const { row, records } = await script([
      { op: "result", outcome: { status: "ok", value: { partial: true } } },
      { op: "emit", kind: "after_result", data: null },
      { op: "finish" },
    ]);
    expect(kinds(records)).toEqual(["tool_result", "after_result", "tool_call_ended"]);
    expect(records[0]!.payload.outcome).toEqual({ status: "ok", value: { partial: true } });
    // finish without a result: the terminal outcome is the call's last result.
    expect(row.outcome).toEqual({ status: "ok", value: { partial: true } });
  });

  it("a non-success result ends the call; later calls are refused with call_ended", async () => {
    const { seq, row, records } = await script([
      { op: "result", outcome: { status: "error", error: { code: "not_found", message: "no such thing" } } },
      { op: "emit", kind: "too_late", data: null },
      { op: "finish", outcome: { status: "ok", value: 1 } },
      { op: "telemetry-answers" },
    ]);
    expect(kinds(records)).toEqual(["tool_result", "tool_call_ended"]);
    expect(row.outcome).toEqual({ status: "error", error: { code: "not_found", message: "no such thing" } });
    const answers = await telemetryAnswers(log, seq);
    expect(answers[2]!.err).toMatch(/^call_ended: /);
    expect(answers[3]!.err).toMatch(/^call_ended: /);
  });

  it("a call ended by its own result keeps its grace: the worker hearing of that end does not stop it", async () => {
    // The spin outlasts the commit's notification and the worker's one-second backstop check, either
    // of which used to stop the component as if its call had been ended elsewhere.
    const { seq, row } = await script([
      { op: "result", outcome: { status: "error", error: { code: "not_found", message: "gone" } } },
      { op: "spin", ms: 2500 },
      { op: "telemetry-answers" },
    ]);
    expect(row.outcome?.status).toBe("error");
    const answers = await telemetryAnswers(log, seq);
    expect(answers[2]).toEqual({ ok: "spun" });
    expect(log.lines.some((l) => l.msg === "component stopped" && l.seq === seq)).toBe(false);
  });

  it("a call ended elsewhere while its component writes stops it at the first refused write, without grace", async () => {
    // Its writes are nearly always in flight, so the worker's check for ended calls leaves it be;
    // the refused write must stop it, or it would run on for this file's 15 s of grace.
    const steps = Array.from({ length: 2000 }, () => ({ op: "emit", kind: "tick", data: null }));
    const seq = await callComponent(h, session, { input: { steps } });
    await until("the component is emitting", async () => (await callRecords(h.db.sql, session, seq)).length > 0);
    await h.writer.submit(endCalls({ sessionId: session, seqs: [seq] }, { status: "cancelled", cause: "sdk_cancel" }));
    await until("the component stopped because its call ended", () =>
      log.lines.some((l) => l.msg === "component stopped" && l.seq === seq && l.reason === "ended"),
    );
    expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "cancelled", cause: "sdk_cancel" });
    const ticks = (await callRecords(h.db.sql, session, seq)).filter((r) => r.kind === "tick").length;
    expect(ticks).toBeLessThan(steps.length);
  });

  it("text Postgres cannot store: an event is refused; a result ends the call invalid_output at once", async () => {
    // The input holds the escapes as plain text; the component hands them on as JSON, so the
    // worker parses a NUL character and an unpaired surrogate.
    const { seq, row, records } = await script([
      { op: "emit-raw", kind: "progress", text: '{"t":"a\\u0000b"}' },
      { op: "emit", kind: "progress", data: "fine" },
      { op: "result-raw", text: '{"status":"ok","value":{"k":"\\ud800"}}' },
      { op: "finish", outcome: { status: "ok", value: 1 } },
      { op: "telemetry-answers" },
    ]);
    expect(kinds(records)).toEqual(["progress", "tool_result", "tool_call_ended"]);
    expect(row.outcome?.error?.code).toBe("invalid_output");
    expect(row.outcome?.error?.message).toMatch(/cannot be stored/);
    const answers = await telemetryAnswers(log, seq);
    expect(answers[1]!.err).toMatch(/^unstorable_text: /);
    expect(answers[2]!.ok).toBe(records[0]!.seq);
    expect(answers[3]!.err).toMatch(/^unstorable_text: /);
    expect(answers[4]!.err).toMatch(/^call_ended: /);
  });

  it("a malformed outcome is journaled as invalid_output, which ends the call", async () => {
    const { row, records } = await script([{ op: "result", outcome: { status: "ok" } }, { op: "finish" }]);
    expect(kinds(records)).toEqual(["tool_result", "tool_call_ended"]);
    expect(row.outcome?.status).toBe("error");
    expect(row.outcome?.error?.code).toBe("invalid_output");
    const notJson = await script([{ op: "finish-raw", text: "{{" }]);
    expect(notJson.row.outcome?.error?.code).toBe("invalid_output");
  });

  it("returned ends the synchronous phase once; the call stays open for more", async () => {
    const { row, records } = await script([
      { op: "emit", kind: "before", data: null },
      { op: "returned" },
      { op: "returned" },
      { op: "emit", kind: "after", data: null },
      { op: "result", outcome: { status: "ok", value: "late" } },
      { op: "finish" },
    ]);
    expect(kinds(records)).toEqual(["before", "tool_returned", "after", "tool_result", "tool_call_ended"]);
    expect(row.outcome).toEqual({ status: "ok", value: "late" });
  });

  it("finish with an outcome journals the result and the end in order", async () => {
    const { row, records } = await script([{ op: "finish", outcome: { status: "ok", value: { done: 1 } } }]);
    expect(kinds(records)).toEqual(["tool_result", "tool_call_ended"]);
    expect(records[1]!.payload.outcome).toEqual({ status: "ok", value: { done: 1 } });
    expect(row.outcome).toEqual({ status: "ok", value: { done: 1 } });
  });

  it("a run that returns without finish is finished with no result, after returned", async () => {
    const plain = await script([{ op: "emit", kind: "only", data: null }]);
    expect(kinds(plain.records)).toEqual(["only", "tool_returned", "tool_call_ended"]);
    expect(plain.row.outcome).toEqual({ status: "ok" });
    // Already returned: no second tool_returned.
    const returned = await script([{ op: "returned" }]);
    expect(kinds(returned.records)).toEqual(["tool_returned", "tool_call_ended"]);
  });
});

describe("model, telemetry, traps", () => {
  it("model calls the session's model, journaled with the call as origin before it answers", async () => {
    const request = { system: "Be brief.", messages: [{ role: "user", content: "summarise" }] };
    const { seq, row } = await script([
      { op: "model", request },
      { op: "model", request: { messages: [] } },
      { op: "finish-answers" },
    ]);
    const [, answered, refused] = answersOf(row);
    expect(answered!.ok).toMatchObject({ text: "from the model", toolCalls: [], stopReason: "end", model: "scripted" });
    expect(refused!.err).toMatch(/^invalid_model_request: /);
    const records = await h.db.sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
      SELECT seq, kind, payload FROM records WHERE session_id = ${session} AND kind LIKE 'model_call_%' ORDER BY seq`;
    const origin = { type: "tool", sessionId: session, sequence: seq };
    expect(records.map((r) => [r.kind, r.payload.origin])).toEqual([
      ["model_call_started", origin],
      ["model_call_ended", origin],
    ]);
    expect(records[0]!.payload.request).toEqual(request);
    expect(records[1]!.payload.outcome).toEqual({ status: "ok" });
    // The answer the component got names the record that holds it.
    expect((answered!.ok as { sequence: number }).sequence).toBe(records[1]!.seq);
  });

  it("telemetry and stdout reach the worker's log only, never the journal", async () => {
    const marker = `marker-${Date.now()}`;
    const { records } = await script([
      { op: "telemetry", level: "warn", message: marker },
      { op: "stdout", text: `${marker}-stdout` },
      { op: "finish" },
    ]);
    expect(kinds(records)).toEqual(["tool_call_ended"]);
    // Only the input that carried it (tool_call_started) mentions the marker.
    const all = await h.db.sql`
      SELECT 1 FROM records WHERE payload::text LIKE ${`%${marker}%`} AND kind <> 'tool_call_started'`;
    expect(all).toHaveLength(0);
    await until("telemetry logged", () => log.lines.some((l) => l.telemetry === marker && l.level === 40));
    await until("stdout logged", () => log.lines.some((l) => l.line === `${marker}-stdout`));
  });

  it("a trap ends the call with component_trap, carrying the message", async () => {
    const { row, records } = await script([
      { op: "emit", kind: "before_trap", data: null },
      { op: "trap", message: "kaboom" },
    ]);
    expect(kinds(records)).toEqual(["before_trap", "tool_result", "tool_call_ended"]);
    expect(row.outcome?.status).toBe("error");
    expect(row.outcome?.error?.code).toBe("component_trap");
    expect(JSON.stringify(row.outcome?.error)).toContain("kaboom");
  });

  it("the worker keeps running calls after a trap", async () => {
    const { row } = await script([{ op: "finish", outcome: { status: "ok", value: "fine" } }]);
    expect(row.outcome).toEqual({ status: "ok", value: "fine" });
  });
});

// A component is stopped (its thread terminated, wherever it is) at its deadline, when its call is
// ended elsewhere, and shortly after it finished if it keeps running; the worker stays healthy.
import { endCalls } from "@aexhq/brain-db/ops";
import { expect, it } from "vitest";
import { until } from "../../testkit/wait.js";
import { answersOf, callComponent, callRecords, scriptWorker, waitForEnd } from "./support.js";

// No backstop within these tests: a call ended elsewhere is stopped by what the worker hears.
const { h, log, session } = scriptWorker({ worker: { backstopMs: 600_000 } });

function stopped(seq: number, reason: string) {
  return until(`call ${seq} stopped (${reason})`, () =>
    log.lines.some((l) => l.msg === "component stopped" && l.seq === seq && l.reason === reason),
  );
}

async function healthy(): Promise<void> {
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "finish", outcome: { status: "ok", value: 1 } }] },
  });
  expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "ok", value: 1 });
}

it("a component looping past its deadline is terminated and the call ends timeout", async () => {
  const started = Date.now();
  const seq = await callComponent(h, session, {
    deadline: started + 1500,
    input: { steps: [{ op: "emit", kind: "looping", data: null }, { op: "loop" }] },
  });
  const row = await waitForEnd(h.db.sql, session, seq);
  expect(row.outcome).toEqual({ status: "timeout", cause: "deadline" });
  expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
  expect((await callRecords(h.db.sql, session, seq)).map((r) => r.kind)).toEqual(["looping", "tool_call_ended"]);
  await stopped(seq, "deadline");
  await healthy();
});

it("the component receives its deadline", async () => {
  const deadline = Date.now() + 30_000;
  const seq = await callComponent(h, session, { deadline, input: { steps: [{ op: "finish-answers" }] } });
  const row = await waitForEnd(h.db.sql, session, seq);
  const [first] = answersOf(row);
  expect((first!.ok as { deadline: number }).deadline).toBe(deadline);
});

it("a background component (returned, still running) is stopped at its deadline too", async () => {
  const seq = await callComponent(h, session, {
    deadline: Date.now() + 1000,
    input: { steps: [{ op: "returned" }, { op: "loop" }] },
  });
  const row = await waitForEnd(h.db.sql, session, seq);
  expect(row.outcome).toEqual({ status: "timeout", cause: "deadline" });
  expect((await callRecords(h.db.sql, session, seq)).map((r) => r.kind)).toEqual(["tool_returned", "tool_call_ended"]);
  await stopped(seq, "deadline");
});

it("an invocation whose deadline passed before it was claimed never runs", async () => {
  const seq = await callComponent(h, session, {
    deadline: Date.now() - 1,
    input: { steps: [{ op: "emit", kind: "ran", data: null }] },
  });
  const row = await waitForEnd(h.db.sql, session, seq);
  expect(row.outcome).toEqual({ status: "timeout", cause: "deadline" });
  expect((await callRecords(h.db.sql, session, seq)).map((r) => r.kind)).toEqual(["tool_call_ended"]);
});

it("a call cancelled elsewhere stops its component at once", async () => {
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "emit", kind: "looping", data: null }, { op: "loop" }] },
  });
  await until("the component is running", async () => (await callRecords(h.db.sql, session, seq)).length > 0);
  const cancelledAt = Date.now();
  // As the server does on cancelCall: its commit NOTIFYs, and the worker hears it.
  await h.writer.submit(endCalls({ sessionId: session, seqs: [seq] }, { status: "cancelled", cause: "sdk_cancel" }));
  await stopped(seq, "ended");
  expect(Date.now() - cancelledAt).toBeLessThan(1500);
  expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "cancelled", cause: "sdk_cancel" });
  await healthy();
});

it("a component still running after it finished is stopped shortly after", async () => {
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "finish", outcome: { status: "ok", value: "done" } }, { op: "loop" }] },
  });
  expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "ok", value: "done" });
  await stopped(seq, "ended");
});

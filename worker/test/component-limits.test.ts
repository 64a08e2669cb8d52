// Finding 3 of the tenant review: component threads ran without memory limits or a CPU bound, and
// inherited the worker's environment. A call is now stopped at its CPU bound (`cpu_exceeded`) or
// when its memory runs out (`memory_exceeded`), the worker stays healthy, and a thread sees no
// environment. Deadlines stay the callers': these limits are on resources, not on time.
import { expect, it } from "vitest";
import { callComponent, scriptWorker, waitForEnd } from "./support.js";

const { h, session } = scriptWorker({
  worker: { componentLimits: { memoryBytes: 64 * 1024 * 1024, cpuMs: 1500 } },
});

async function healthy(): Promise<void> {
  const seq = await callComponent(h, session, {
    input: { steps: [{ op: "finish", outcome: { status: "ok", value: 1 } }] },
  });
  expect((await waitForEnd(h.db.sql, session, seq)).outcome).toEqual({ status: "ok", value: 1 });
}

it("stops a component that loops without a deadline at its CPU bound: cpu_exceeded", async () => {
  const seq = await callComponent(h, session, { input: { steps: [{ op: "loop" }] } });
  const row = await waitForEnd(h.db.sql, session, seq, 60_000);
  expect(row.outcome).toMatchObject({ status: "error", error: { code: "cpu_exceeded", details: { limitMs: 1500 } } });
  await healthy();
});

it("ends a component that allocates without end memory_exceeded", async () => {
  const seq = await callComponent(h, session, { input: { steps: [{ op: "alloc" }] } });
  const row = await waitForEnd(h.db.sql, session, seq, 60_000);
  expect(row.outcome).toMatchObject({ status: "error", error: { code: "memory_exceeded" } });
  await healthy();
});

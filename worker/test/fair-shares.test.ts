// Finding 3 of the tenant review: one tenant could take every worker slot. Calls without deadlines
// of a component that loops hold their slots for as long as they run; a worker now gives one owner
// (an application token, or the operator) at most all its slots but one, so another tenant's call
// runs beside a flood. Here two slots: the flood holds one, the other tenant's call takes the other.
import { expect, it } from "vitest";
import { callComponent, callRow, scriptWorker, waitForEnd } from "./support.js";

const { h, session } = scriptWorker({
  worker: { concurrency: 2, componentLimits: { memoryBytes: 64 << 20, cpuMs: 0 } },
});

it("runs another tenant's call while one tenant's calls hold every slot they may", async () => {
  const flood = [];
  for (let i = 0; i < 4; i++) {
    flood.push(await callComponent(h, session, { owner: "tenant-a", input: { steps: [{ op: "loop" }] } }));
  }
  const other = await callComponent(h, session, {
    owner: "tenant-b",
    input: { steps: [{ op: "finish", outcome: { status: "ok", value: "ran" } }] },
  });
  expect((await waitForEnd(h.db.sql, session, other, 60_000)).outcome).toEqual({ status: "ok", value: "ran" });
  // The flood runs one call at a time; the rest wait their turn, pending.
  const states = await Promise.all(flood.map(async (seq) => (await callRow(h.db.sql, session, seq)).state));
  expect(states.filter((s) => s === "running")).toHaveLength(1);
  expect(states.filter((s) => s === "pending")).toHaveLength(3);
});

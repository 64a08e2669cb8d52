import { PendingRepairs } from "@aexhq/brain-db/writer";
import { describe, expect, it } from "vitest";

// Deferred journal writes (a lost connection's ends, a call's unstorable finish) retried each
// heartbeat: which failures keep a repair for the next run, and which drop it.

const failing = (error: unknown) => async () => {
  throw error;
};

describe("PendingRepairs", () => {
  it("keeps a repair that lost a deadlock or a serialization conflict, and runs the rest", async () => {
    const failures: string[] = [];
    const repairs = new PendingRepairs((_err, key) => failures.push(key));
    let tries = 0;
    let ran = 0;
    repairs.add("deadlocked", async () => {
      tries++;
      if (tries === 1) throw Object.assign(new Error("deadlock detected"), { code: "40P01" });
      if (tries === 2) throw Object.assign(new Error("could not serialize access"), { code: "40001" });
    });
    repairs.add("fine", async () => {
      ran++;
    });
    await repairs.run();
    expect({ size: repairs.size, ran, failures }).toEqual({ size: 1, ran: 1, failures: [] });
    await repairs.run();
    expect(repairs.size).toBe(1);
    await repairs.run();
    expect({ size: repairs.size, tries, failures }).toEqual({ size: 0, tries: 3, failures: [] });
  });

  it("drops and reports a repair that fails for another reason; stops at a lost connection", async () => {
    const failures: string[] = [];
    const repairs = new PendingRepairs((_err, key) => failures.push(key));
    repairs.add("broken", failing(Object.assign(new Error("violates check constraint"), { code: "23514" })));
    repairs.add("away", failing(Object.assign(new Error("terminating connection"), { code: "57P01" })));
    repairs.add("after", async () => {});
    await repairs.run();
    expect(failures).toEqual(["broken"]);
    // The database went away at "away": it and what follows wait for the next run.
    expect(repairs.size).toBe(2);
  });
});

import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { brainJournal } from "../src/baselines/bare-stack/stack-journal.js";
import { ScenarioDatabases } from "../src/runner/scenario-database.js";

// floor_stack_journal claims to commit what Brain's server commits for a tool_throughput turn.
// The records below are the ones Brain's server journaled for that turn (a `--keep-db` run of
// tool_throughput, 2026-12-05): if the floor wrote less, its figures would flatter the journal.
const BRAIN_TURN = [
  ["user_message", "activation_started", "model_call_started"],
  ["model_call_ended", "tool_call_started", "tool_call_started"],
  ["tool_result", "tool_call_ended"],
  ["tool_result", "tool_call_ended"],
  ["model_call_started"],
  ["model_call_ended", "tool_call_started", "tool_call_started"],
  ["tool_result", "tool_call_ended"],
  ["tool_result", "tool_call_ended"],
  ["model_call_started"],
  ["model_call_ended", "assistant_message", "activation_ended"],
].flat();

describe("Brain's journal on the bare stack (floor_stack_journal)", () => {
  const databases = new ScenarioDatabases(inject("brainAdminUrl"), {
    keep: false,
    pgStatStatements: false,
    log: () => {},
  });

  it("journals a two-round turn as Brain's server does: its records, call rows, budget and wake window", async () => {
    await databases.with(async (db) => {
      const journal = await brainJournal(db.url);
      try {
        const session = randomUUID();
        for (let turn = 0; turn < 2; turn++) {
          await journal.message(session, "go");
          for (const round of [0, 1]) {
            const intents = await journal.answer(session, round, 2);
            await Promise.all(intents.map((i) => journal.result(session, i.seq, i.input)));
            await journal.next(session);
          }
          await journal.final(session);
        }
        const records = await db.sql<{ seq: string; kind: string; payload: Record<string, unknown> }[]>`
          SELECT seq, kind, payload FROM brain.records WHERE session_id = ${session} ORDER BY seq`;
        expect(records.map((r) => r.kind)).toEqual(["session_created", ...BRAIN_TURN, ...BRAIN_TURN]);
        // Dense sequences, and references resolved as Brain's server writes them.
        expect(records.map((r) => Number(r.seq))).toEqual(records.map((_, i) => i + 1));
        expect(records[2]!.payload).toMatchObject({ cause: "user_message", message: 2 });
        expect(records[7]!.payload).toMatchObject({ call: 6, outcome: { status: "ok", value: { i: 0 } } });
        // The next model call waited out the wake window from the round's first result.
        const wake = records[11]!.payload.wake as { openedAt: number; firedAt: number };
        expect(wake.firedAt - wake.openedAt).toBeGreaterThanOrEqual(5);
        expect(records[22]!.payload).toMatchObject({ status: "completed", message: 2, activation: 3 });

        const calls = await db.sql<{ state: string; n: string }[]>`
          SELECT state, count(*) AS n FROM brain.calls WHERE session_id = ${session} GROUP BY state`;
        expect(calls.map((c) => [c.state, Number(c.n)])).toEqual([["ended", 8]]);
        const budgets = await db.sql<{ model_calls: number; emitted_bytes: string }[]>`
          SELECT model_calls, emitted_bytes FROM brain.activation_budgets WHERE session_id = ${session}
          ORDER BY activation_seq`;
        expect(budgets.map((b) => b.model_calls)).toEqual([3, 3]);
        expect(budgets.every((b) => Number(b.emitted_bytes) > 0)).toBe(true);
      } finally {
        await journal.close();
      }
    });
  });

  it("emits as transitions of a running call, each charged to its budget", async () => {
    await databases.with(async (db) => {
      const journal = await brainJournal(db.url);
      try {
        const session = randomUUID();
        await journal.emit(session, { k: 1 });
        await journal.emit(session, { k: 2 });
        const records = await db.sql<{ kind: string; payload: unknown }[]>`
          SELECT kind, payload FROM brain.records WHERE session_id = ${session} ORDER BY seq`;
        expect(records.map((r) => r.kind)).toEqual([
          "session_created",
          "tool_call_started",
          "bench.tick",
          "bench.tick",
        ]);
        expect(records[3]!.payload).toEqual({ call: 2, data: { k: 2 } });
        const [call] = await db.sql<{ state: string }[]>`
          SELECT state FROM brain.calls WHERE session_id = ${session}`;
        expect(call!.state).toBe("running");
      } finally {
        await journal.close();
      }
    });
  });
});

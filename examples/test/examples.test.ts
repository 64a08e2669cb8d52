// The seed's `lookup` example, exactly as a user runs it: a real Brain server process and the
// example as a separate Node process talking to it over HTTP and WebSocket.
import { describe, expect, it } from "vitest";
import { spawnBrain } from "../../testkit/brain.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { printedJournal, runExample, storedJournal } from "./support.js";

const brain = startedBeforeAll(() => spawnBrain());

describe("examples/lookup", () => {
  it("runs against a spawned server, prints done and the session's journal", async () => {
    const { lines, sessionId } = await runExample(brain, "examples/lookup/main.mjs");
    expect(lines[0]).toBe("done");

    const printed = printedJournal(lines);
    expect(sessionId).toBeDefined();
    const stored = await storedJournal(brain.db, sessionId);
    expect(printed).toEqual(stored);

    const call = printed.find((r) => r.kind === "tool_call_started");
    expect(call?.payload).toMatchObject({ tool: "lookup", input: { id: "42" } });
    const own = printed.filter((r) => r.payload.call === call?.seq).map((r) => [r.kind, r.payload]);
    expect(own).toEqual([
      ["lookup_started", { call: call?.seq, data: { id: "42" } }],
      ["tool_result", { call: call?.seq, outcome: { status: "ok", value: { value: "Ada Lovelace" } } }],
      ["tool_call_ended", { call: call?.seq, outcome: { status: "ok", value: { value: "Ada Lovelace" } } }],
    ]);
    expect(printed.at(-1)).toMatchObject({ kind: "activation_ended", payload: { status: "completed", text: "done" } });
  }, 60_000);
});

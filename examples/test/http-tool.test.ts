// The http-tool example as a user runs it: a Brain server process, a worker process and the
// example as its own process, serving its tool over HTTP and printing the session's journal.
import { expect, it } from "vitest";
import { spawnBrainWithWorker } from "../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { printedJournal, runExample, storedJournal } from "./support.js";

// The worker signs the tool's callback tokens with the key the server verifies them with.
const brain = startedBeforeAll(() => spawnBrainWithWorker(), { timeoutMs: 120_000 });

it("serves lookup over HTTP through a separate worker and prints the journal", async () => {
  const { lines, sessionId } = await runExample(brain, "examples/http-tool/main.mjs");
  expect(lines[0]).toBe("done");
  const printed = printedJournal(lines);
  const stored = await storedJournal(brain.db, sessionId);
  expect(printed).toEqual(stored);

  const created = printed.find((r) => r.kind === "session_created");
  expect(created?.payload.tools).toEqual([
    {
      name: "lookup",
      env: {
        type: "host",
        name: "web",
        url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/tools$/),
        protocol: "tool",
      },
    },
  ]);
  const call = printed.find((r) => r.kind === "tool_call_started");
  expect(call?.payload).toMatchObject({ tool: "lookup", input: { id: "42" } });
  const own = printed.filter((r) => r.payload.call === call?.seq).map((r) => [r.kind, r.payload]);
  expect(own).toEqual([
    ["tool_result", { call: call?.seq, outcome: { status: "ok", value: { value: "Ada Lovelace" } } }],
    ["tool_call_ended", { call: call?.seq, outcome: { status: "ok", value: { value: "Ada Lovelace" } } }],
  ]);
  expect(printed.at(-1)).toMatchObject({ kind: "activation_ended", payload: { status: "completed", text: "done" } });
}, 60_000);

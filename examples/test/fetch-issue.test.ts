// The fetch_issue example end to end, as a user runs it: a Brain server process, a separate worker
// process (`npm run worker`) and the example as its own process, with its local "GitHub".
import { expect, it } from "vitest";
import { spawnBrainWithWorker } from "../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { printedJournal, runExample, storedJournal } from "./support.js";

// The worker opens the Environment's headers: spawnBrainWithWorker gives it the servers' key.
const brain = startedBeforeAll(() => spawnBrainWithWorker(), { timeoutMs: 120_000 });

it("fetches the issue through its HTTP Environment, and journals it without the token", async () => {
  const { out, lines, sessionId } = await runExample(brain, "examples/fetch_issue/main.mjs");
  expect(lines[0]).toBe("done");
  const printed = printedJournal(lines);
  const ended = printed.find((r) => r.kind === "tool_call_ended");
  expect(ended?.payload.outcome).toEqual({
    status: "ok",
    value: { number: 1, title: "Durable tools on Postgres", state: "open", repository: "aexhq/brain" },
  });
  const started = printed.find((r) => r.kind === "tool_call_started");
  expect(started?.payload).toMatchObject({ tool: "fetch_issue", input: { number: 1 } });
  expect(out).not.toContain("example-token-not-a-real-one");
  const stored = await storedJournal(brain.db, sessionId);
  expect(printed).toEqual(stored);
}, 60_000);

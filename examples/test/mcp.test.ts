// The mcp example end to end, as a user runs it: a Brain server process, a separate worker process
// and the example as its own process, with its own MCP server (official SDK).
import { expect, it } from "vitest";
import { spawnBrainWithWorker } from "../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { printedJournal, runExample, storedJournal } from "./support.js";

const brain = startedBeforeAll(() => spawnBrainWithWorker(), { timeoutMs: 120_000 });

it("calls the MCP server's tools, one as a task, journaling progress and the task, without the token", async () => {
  const { out, lines, sessionId } = await runExample(brain, "examples/mcp/main.mjs");
  expect(lines[0]).toBe("done");
  const printed = printedJournal(lines);
  const outcomes = printed.filter((r) => r.kind === "tool_call_ended").map((r) => r.payload.outcome);
  expect(outcomes).toEqual(
    expect.arrayContaining([
      { status: "ok", value: { counted: 3 } },
      { status: "ok", value: { pages: 3 } },
    ]),
  );
  expect(printed.filter((r) => r.kind === "progress")).toHaveLength(3);
  expect(printed.filter((r) => r.kind === "brain.mcp_task")).toHaveLength(1);
  expect(out).not.toContain("example-token-not-a-real-one");
  const stored = await storedJournal(brain.db, sessionId);
  expect(printed).toEqual(stored);
}, 60_000);

// The inspect example end to end, as a user runs it: a Brain server process, a separate worker
// process (`npm run worker`), and the example as its own process, with inspect.wasm built from
// source (testkit/components.ts builds it once per source hash).
import { copyFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { spawnBrainWithWorker } from "../../testkit/brain-with-worker.js";
import { testComponentPath } from "../../testkit/components.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { REPO_ROOT } from "../../testkit/server-process.js";
import { printedJournal, runExample } from "./support.js";

beforeAll(async () => {
  const built = await testComponentPath("inspect");
  const target = join(REPO_ROOT, "examples", "inspect", "inspect.wasm");
  copyFileSync(built, target);
  // Newer than its sources, so the example uses it rather than building its own.
  const now = new Date();
  utimesSync(target, now, now);
}, 180_000);

const brain = startedBeforeAll(() => spawnBrainWithWorker(), { timeoutMs: 120_000 });

it("lists the session's workspace to the given depth, through a separate worker process", async () => {
  const { lines } = await runExample(brain, "examples/inspect/main.mjs");
  expect(lines[0]).toBe("done");
  const ended = printedJournal(lines).find((r) => r.kind === "tool_call_ended");
  expect(ended?.payload.outcome).toEqual({
    status: "ok",
    value: {
      entries: [
        { path: "README.md", type: "file", size: 7 },
        { path: "src", type: "directory" },
        { path: "src/index.ts", type: "file", size: 26 },
        { path: "src/lib", type: "directory" },
      ],
      truncated: false,
    },
  });
}, 120_000);

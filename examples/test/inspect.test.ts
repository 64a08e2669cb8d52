// The inspect example end to end, as a user runs it: a Brain server process, a separate worker
// process (`npm run worker`), and the example as its own process, with inspect.wasm built from
// source (testkit/components.ts builds it once per source hash).
import { copyFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { testComponentPath } from "../../testkit/components.js";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import {
  type NodeProcess,
  REPO_ROOT,
  type ServerProcess,
  spawnNode,
  spawnServer,
} from "../../testkit/server-process.js";

let db: TestDatabase;
let server: ServerProcess;
let worker: NodeProcess;

beforeAll(async () => {
  const built = await testComponentPath("inspect");
  const target = join(REPO_ROOT, "examples", "inspect", "inspect.wasm");
  copyFileSync(built, target);
  // Newer than its sources, so the example uses it rather than building its own.
  const now = new Date();
  utimesSync(target, now, now);
  db = await createTestDatabase();
  server = await spawnServer({ databaseUrl: db.url, env: { BRAIN_LOG_LEVEL: "warn" } });
  worker = spawnNode("worker/dist/main.js", {
    env: { DATABASE_URL: db.url, BRAIN_WORKER_CACHE_DIR: join(REPO_ROOT, ".brain-test", "component-cache") },
  });
  await worker.waitForLine(/^Brain worker ready/m, 30_000);
}, 180_000);

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  await db?.drop();
});

it("lists the session's workspace to the given depth, through a separate worker process", async () => {
  const example = spawnNode("examples/inspect/main.mjs", { env: { BRAIN_URL: server.url, BRAIN_TOKEN: server.token } });
  const { code } = await example.exited;
  const out = example.output();
  expect(code, out).toBe(0);
  expect(out.split("\n")[0]).toBe("done");
  const ended = out
    .split("\n")
    .map((line) => /^\d+ tool_call_ended (.*)$/.exec(line)?.[1])
    .find((payload) => payload !== undefined);
  expect(JSON.parse(ended!).outcome).toEqual({
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

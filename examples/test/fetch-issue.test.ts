// The fetch_issue example end to end, as a user runs it: a Brain server process, a separate worker
// process (`npm run worker`) and the example as its own process, with its local "GitHub".
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { TEST_SECRET_KEY } from "../../testkit/secrets.js";
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
  db = await createTestDatabase();
  server = await spawnServer({ databaseUrl: db.url, env: { BRAIN_LOG_LEVEL: "warn" } });
  // The worker opens the Environment's headers: it needs the servers' key.
  worker = spawnNode("worker/dist/main.js", {
    env: {
      DATABASE_URL: db.url,
      BRAIN_SECRET_KEY: TEST_SECRET_KEY,
      BRAIN_WORKER_CACHE_DIR: join(REPO_ROOT, ".brain-test", "component-cache"),
    },
  });
  await worker.waitForLine(/^Brain worker ready/m, 30_000);
}, 120_000);

afterAll(async () => {
  await worker?.stop();
  await server?.stop();
  await db?.drop();
});

it("fetches the issue through its HTTP Environment, and journals it without the token", async () => {
  const example = spawnNode("examples/fetch_issue/main.mjs", {
    env: { BRAIN_URL: server.url, BRAIN_TOKEN: server.token },
  });
  const { code } = await example.exited;
  const out = example.output();
  expect(code, out).toBe(0);
  const lines = out.split("\n");
  expect(lines[0]).toBe("done");
  const printed = lines
    .map((line) => /^(\d+) (\S+) (.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map(([, seq, kind, payload]) => ({ seq: Number(seq), kind, payload: JSON.parse(payload as string) }));
  const ended = printed.find((r) => r.kind === "tool_call_ended");
  expect(ended?.payload.outcome).toEqual({
    status: "ok",
    value: { number: 1, title: "Durable tools on Postgres", state: "open", repository: "aexhq/brain" },
  });
  const started = printed.find((r) => r.kind === "tool_call_started");
  expect(started?.payload).toMatchObject({ tool: "fetch_issue", input: { number: 1 } });
  expect(out).not.toContain("example-token-not-a-real-one");
  const sessionId = /session_id = '([0-9a-f-]{36})'/.exec(out)?.[1] as string;
  const stored = await db.sql<{ seq: number; kind: string; payload: unknown }[]>`
    SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
  expect(printed).toEqual(stored);
}, 60_000);

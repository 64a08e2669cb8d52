// The http-tool example as a user runs it: a Brain server process, a worker process and the
// example as its own process, serving its tool over HTTP and printing the session's journal.
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
  worker = spawnNode("worker/dist/main.js", {
    env: {
      DATABASE_URL: db.url,
      // The worker signs the tool's callback tokens with the key the server verifies them with.
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

it("serves lookup over HTTP through a separate worker and prints the journal", async () => {
  const example = spawnNode("examples/http-tool/main.mjs", {
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
  const sessionId = /session_id = '([0-9a-f-]{36})'/.exec(out)?.[1] as string;
  const stored = await db.sql<{ seq: number; kind: string; payload: unknown }[]>`
    SELECT seq, kind, payload FROM brain.journal WHERE session_id = ${sessionId} ORDER BY seq`;
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

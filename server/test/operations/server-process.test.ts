import { chmod, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import WebSocket from "ws";
import { closeStreams, createSession, dumpSchemas, openEvents, postMessage, request } from "../../../testkit/api.js";
import { createEmptyDatabase, type TestDatabase } from "../../../testkit/database.js";
import { type NodeProcess, type ServerProcess, spawnNode, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { within } from "../../../testkit/wait.js";

const databases: TestDatabase[] = [];
const processes: NodeProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  closeStreams();
  await Promise.all(processes.splice(0).map((p) => p.stop()));
});
afterAll(async () => {
  await Promise.all(databases.map((d) => d.drop()));
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** A database with nothing of Brain's in it yet. */
async function emptyDatabase(): Promise<TestDatabase> {
  const db = await createEmptyDatabase();
  databases.push(db);
  return db;
}

async function start(options: Parameters<typeof spawnServer>[0]): Promise<ServerProcess> {
  const server = await spawnServer(options);
  processes.push(server);
  return server;
}

/** A data directory of our own; Postgres (run as its own user when we are root) must reach it. */
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "brain-process-"));
  await chmod(dir, 0o755);
  dirs.push(dir);
  return dir;
}

/** Schemas other than Postgres's own, and what the `public` schema holds. */
async function layout(sql: Sql): Promise<{ schemas: string[]; inPublic: string[] }> {
  const schemas = await sql<{ name: string }[]>`
    SELECT nspname AS name FROM pg_namespace
    WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1`;
  const inPublic = await sql<{ what: string }[]>`
    SELECT 'relation ' || relname AS what FROM pg_class WHERE relnamespace = 'public'::regnamespace
    UNION ALL SELECT 'function ' || proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace
    UNION ALL SELECT 'type ' || typname FROM pg_type WHERE typnamespace = 'public'::regnamespace
    UNION ALL SELECT 'extension ' || extname FROM pg_extension WHERE extnamespace = 'public'::regnamespace`;
  return { schemas: schemas.map((s) => s.name), inPublic: inPublic.map((r) => r.what) };
}

async function healthy(url: string): Promise<void> {
  const res = await fetch(`${url}/healthz`);
  expect(res.status).toBe(200);
  expect(await res.json()).toMatchObject({ status: "ok" });
}

/** A stack trace line, as Node prints them. */
const STACK = /^\s+at .+\(?.+:\d+:\d+\)?$/m;

describe("server process", () => {
  it("migrates schema brain and brain_boss on DATABASE_URL, nothing in public, and exits 0 on SIGTERM", async () => {
    const db = await emptyDatabase();
    expect((await layout(db.sql)).schemas).toEqual(["public"]);
    const server = await start({ databaseUrl: db.url });
    await healthy(server.url);
    // The hosts it was given (no credentials), and what an acknowledgment is worth on them.
    expect(server.output()).toMatch(/^Postgres: DATABASE_URL \(127\.0\.0\.1:\d+\); schema brain$/m);
    expect(server.output()).not.toContain(`${new URL(db.url).username}:`);
    expect(server.output()).toMatch(
      /^Durability: synchronous_commit=on: an acknowledged write survives a crash of Postgres; a fail-over to an asynchronous standby can lose the latest ones$/m,
    );
    // The banner names the console, and the console is there.
    const consoleUrl = /^Console: (http:\/\/\S+\/console\/) /m.exec(server.output())?.[1];
    expect(consoleUrl).toBe(`${server.url}/console/`);
    expect((await fetch(consoleUrl!)).status).toBe(200);
    expect(await layout(db.sql)).toEqual({ schemas: ["brain", "brain_boss", "public"], inPublic: [] });
    // It works, too.
    const session = await createSession(server, { model: scripted("hi") });
    expect((await postMessage(server, session.id, "hello", { wait: true })).activation?.text).toBe("hi");

    await server.stop();
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).not.toMatch(STACK);
  });

  it("uses BRAIN_SCHEMA and <schema>_boss", async () => {
    const db = await emptyDatabase();
    const server = await start({ databaseUrl: db.url, env: { BRAIN_SCHEMA: "other" } });
    await healthy(server.url);
    await createSession(server);
    expect(await layout(db.sql)).toEqual({ schemas: ["other", "other_boss", "public"], inPublic: [] });
    const [row] = await db.sql`SELECT count(*)::int AS n FROM other.sessions`;
    expect(row?.n).toBe(1);
    await server.stop();
    expect((await server.exited).code).toBe(0);
  });

  it("refuses an invalid environment with a clear message, no stack trace, and a non-zero exit", async () => {
    const db = await emptyDatabase();
    const cases: [Record<string, string>, RegExp][] = [
      [{ BRAIN_PORT: "abc" }, /BRAIN_PORT/],
      [{ BRAIN_PORT: "70000" }, /BRAIN_PORT/],
      [{ BRAIN_SCHEMA: "Bad-Name" }, /BRAIN_SCHEMA/],
      [{ BRAIN_SCHEMA: "public" }, /BRAIN_SCHEMA: public is shared/],
      [{ BRAIN_SCHEMA: "pg_catalog" }, /BRAIN_SCHEMA: pg_catalog is a Postgres system schema/],
      [{ BRAIN_SCHEMA: "information_schema" }, /BRAIN_SCHEMA: information_schema is a Postgres system schema/],
      [{ BRAIN_API_TOKEN: "short" }, /BRAIN_API_TOKEN/],
      [{ BRAIN_LOG_LEVEL: "loud" }, /BRAIN_LOG_LEVEL/],
      [{ BRAIN_HEARTBEAT_MS: "-5" }, /BRAIN_HEARTBEAT_MS/],
      [{ DATABASE_URL: "not a url" }, /DATABASE_URL/],
    ];
    for (const [env, message] of cases) {
      const child = spawnNode("server/dist/main.js", {
        env: { DATABASE_URL: db.url, BRAIN_PORT: "0", BRAIN_API_TOKEN: "a-long-enough-operator-token", ...env },
      });
      processes.push(child);
      const { code } = await child.exited;
      const output = child.output();
      expect(code, output).not.toBe(0);
      expect(output).toMatch(message);
      expect(output).toMatch(/invalid configuration/);
      expect(output).not.toMatch(STACK);
      expect(output).not.toMatch(/Brain listening/);
    }
    // Nothing was created: configuration is checked before the database is touched.
    expect((await layout(db.sql)).schemas).toEqual(["public"]);
  });

  it("an unreachable DATABASE_URL exits non-zero with a message, without its password or a stack", async () => {
    const child = spawnNode("server/dist/main.js", {
      env: {
        DATABASE_URL: "postgres://brain:s3cret-pw@127.0.0.1:1/brain",
        BRAIN_PORT: "0",
        BRAIN_API_TOKEN: "a-long-enough-operator-token",
      },
    });
    processes.push(child);
    const { code } = await child.exited;
    const output = child.output();
    expect(code, output).not.toBe(0);
    expect(output).toMatch(/^brain: .+/m);
    expect(output).not.toContain("s3cret-pw");
    expect(output).not.toMatch(STACK);
  });

  describe("SIGTERM exits 0 (not the forced exit 1 after 10 s) with", () => {
    it("an open follow event stream, which it ends", async () => {
      const server = await start({ databaseUrl: (await emptyDatabase()).url });
      const session = await createSession(server);
      const stream = await openEvents(server, session.id, "after=0&follow=true");
      await stream.reached(1);
      server.child.kill("SIGTERM");
      expect(await server.exited).toEqual({ code: 0, signal: null });
      await within(
        stream.done.catch(() => false),
        "the event stream to end",
      );
    });

    it("a connected host, whose socket it closes with 1001", async () => {
      const server = await start({ databaseUrl: (await emptyDatabase()).url });
      const host = (await request(server, "POST", "/v1/hosts", { body: {} })).json as { id: string; token: string };
      const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/v1/hosts/${host.id}/connect`, {
        headers: { authorization: `Bearer ${host.token}` },
      });
      const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
      await new Promise<void>((resolve, reject) => {
        ws.once("message", () => resolve());
        ws.once("error", reject);
      });
      server.child.kill("SIGTERM");
      expect(await server.exited).toEqual({ code: 0, signal: null });
      expect(await within(closed, "the host socket to close")).toBe(1001);
    });

    it("a message request waiting for its activation", async () => {
      const db = await emptyDatabase();
      const server = await start({ databaseUrl: db.url });
      // The activation calls a tool of a host that never connects: it cannot end by itself.
      const host = (await request(server, "POST", "/v1/hosts", { body: {} })).json as { id: string };
      const stuck = await createSession(server, {
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: {} }] }] },
        hostId: host.id,
        tools: [
          {
            name: "lookup",
            description: "d",
            inputSchema: { type: "object" },
            outputSchema: null,
            env: { type: "host", name: "app" },
          },
        ],
      });
      const waiting = request(server, "POST", `/v1/sessions/${stuck.id}/messages`, {
        body: { text: "go", wait: true },
      }).catch((error: unknown) => error);
      await toolCallStarted(db, stuck.id);
      server.child.kill("SIGTERM");
      expect(await server.exited).toEqual({ code: 0, signal: null });
      await within(waiting, "the waiting request to be answered or cut");
    });
  });

  it("generates an operator token without BRAIN_API_TOKEN, saves it 0600, shows it once, and reuses it", async () => {
    const db = await emptyDatabase();
    const dir = await dataDir();
    const env = { BRAIN_API_TOKEN: undefined, BRAIN_DATA_DIR: dir };
    const first = await start({ databaseUrl: db.url, env });
    const [, path, token] = await first.waitForLine(/^Operator token \(saved in (.+)\): (\S+)$/m);
    expect(path).toBe(join(dir, "operator-token"));
    expect(token!.length).toBeGreaterThanOrEqual(16);
    expect((await readFile(path!, "utf8")).trim()).toBe(token);
    expect((await stat(path!)).mode & 0o777).toBe(0o600);
    const target = { url: first.url, token: token! };
    expect((await request(target, "GET", "/v1/sessions")).status).toBe(200);
    expect((await request({ url: first.url, token: first.token }, "GET", "/v1/sessions")).status).toBe(401);
    await first.stop();

    const second = await start({ databaseUrl: db.url, env });
    // Shown when it was made, not on every start.
    await second.waitForLine(/^Operator token: saved in .+operator-token \(shown when it was generated\)$/m);
    expect(second.output()).not.toContain(token);
    expect((await request({ url: second.url, token: token! }, "GET", "/v1/sessions")).status).toBe(200);
    await second.stop();
    expect((await second.exited).code).toBe(0);
  });

  it("keeps secrets out of its output: operator token, host tokens, Idempotency-Keys", async () => {
    const db = await emptyDatabase();
    const server = await start({ databaseUrl: db.url, env: { BRAIN_LOG_LEVEL: "trace" } });
    const host = (await request(server, "POST", "/v1/hosts", { body: { name: "h" } })).json as {
      id: string;
      token: string;
    };
    const key = "idempotency-key-that-must-not-be-logged";
    const session = await createSession(server);
    await postMessage(server, session.id, "hi", { key, wait: true });
    await request(server, "POST", `/v1/sessions/${session.id}/messages`, {
      body: { text: "other" },
      headers: { "idempotency-key": key },
    });
    await request({ url: server.url, token: host.token }, "GET", "/v1/sessions");
    const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/v1/hosts/${host.id}/connect`, {
      headers: { authorization: `Bearer ${host.token}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("message", () => resolve());
      ws.once("error", reject);
    });
    ws.send("not json");
    ws.close();
    await new Promise((resolve) => ws.once("close", resolve));
    await server.stop();
    const output = server.output();
    // The trace level logs every request: the check would be empty otherwise.
    expect(output).toMatch(/incoming request/);
    for (const secret of [server.token, host.token, key]) expect(output).not.toContain(secret);
    const sql = connect(db.url, { schema: "brain", searchPath: true, max: 1 });
    try {
      const dump = await dumpSchemas(sql, ["brain", "brain_boss"]);
      for (const secret of [server.token, host.token, key]) expect(dump).not.toContain(secret);
    } finally {
      await sql.end();
    }
  });

  it("starts on an embedded Postgres without DATABASE_URL", async () => {
    const dir = await dataDir();
    const server = await start({
      databaseUrl: "",
      env: { DATABASE_URL: undefined, BRAIN_DATA_DIR: dir },
      startTimeoutMs: 90_000,
    });
    expect(server.output()).toMatch(/Postgres: embedded, under .+; schema brain/);
    await healthy(server.url);
    const session = await createSession(server);
    expect(session.lastSequence).toBe(1);
    await server.stop();
    expect((await server.exited).code).toBe(0);
    // Its Postgres stopped with it.
    await expect(stat(join(dir, "pg", "postmaster.pid"))).rejects.toThrow(/ENOENT/);
  }, 120_000);
});

/** Waits until the session has a tool_call_started record. */
async function toolCallStarted(db: TestDatabase, sessionId: string): Promise<void> {
  const sql = connect(db.url, { schema: "brain", searchPath: true, max: 1 });
  try {
    await vi.waitFor(
      async () => {
        const rows = await sql`SELECT 1 FROM records WHERE session_id = ${sessionId} AND kind = 'tool_call_started'`;
        expect(rows).toHaveLength(1);
      },
      { timeout: 10_000, interval: 20 },
    );
  } finally {
    await sql.end();
  }
}

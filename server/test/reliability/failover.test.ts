import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

// Several server processes on one database, spawned and killed for real.

let db: TestDatabase;
const token = `failover-${Date.now()}-token`;
const servers: ServerProcess[] = [];
const clients: Brain[] = [];

async function server(): Promise<ServerProcess & { id: string }> {
  const s = await spawnServer({ databaseUrl: db.url, token, env: { BRAIN_LOG_LEVEL: "warn" } });
  servers.push(s);
  const { serverId } = (await (await fetch(`${s.url}/healthz`)).json()) as { serverId: string };
  return Object.assign(s, { id: serverId });
}

function client(url: string): Brain {
  const c = new Brain({ url, token });
  clients.push(c);
  return c;
}

async function api<T>(base: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Fail-over takes seconds (a heartbeat must go stale), and longer on a loaded machine. */
const untilSlow = <T>(probe: () => Promise<T | undefined | null | false>) => until("the fail-over", probe, 30_000);

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of servers) await s.kill().catch(() => {});
  await db?.drop();
});

describe("several servers on one database", () => {
  it("a host connected to server A serves a session created through server B", async () => {
    const [a, b] = [await server(), await server()];
    let runs = 0;
    const lookup = tool({
      name: "lookup",
      description: "Look up one record.",
      input: z.object({ id: z.string() }),
      run: async ({ id }, ctx) => {
        runs++;
        return ctx.finish({ value: `v${id}` });
      },
    });
    const host = client(a.url);
    await host.sessions.create({ model: scripted(), tools: [lookup()] }); // registers and connects the host on A
    const placed = lookup();
    const created = await api<{ id: string }>(b.url, "/v1/sessions", {
      model: scripted({ toolCalls: [{ name: "lookup", input: { id: "7" } }] }, { text: "done" }),
      tools: [placed.placement],
      hostId: host.credentials()!.hostId,
    });
    await host.sessions.get(created.id, { tools: [placed] });
    const answer = await api<{ activation: { text: string } }>(b.url, `/v1/sessions/${created.id}/messages`, {
      text: "go",
      wait: true,
    });
    expect(answer.activation.text).toBe("done");
    expect(runs).toBe(1);
    const [route] = await db.sql<{ conn_server: string; owner: string; outcome: { value: unknown } }[]>`
      SELECT hc.server_id AS conn_server, s.owner_id AS owner, c.outcome
      FROM calls c JOIN host_connections hc ON hc.id = c.connection_id JOIN sessions s ON s.id = c.session_id
      WHERE c.session_id = ${created.id}`;
    expect(route).toMatchObject({ conn_server: a.id, owner: b.id, outcome: { status: "ok", value: { value: "v7" } } });
  });

  it("SIGKILL: the other server declares it dead, its dispatched calls end unknown, its sessions go on, nothing is sent twice", async () => {
    const [a, b] = [await server(), await server()];
    let runs = 0;
    let aborted: unknown = null;
    const slow = tool({
      name: "slow",
      description: "Never finishes by itself.",
      input: z.object({}),
      run: async (_input, ctx) => {
        runs++;
        await new Promise<void>((resolve) =>
          ctx.signal.addEventListener("abort", () => {
            aborted = ctx.signal.reason;
            resolve();
          }),
        );
      },
    });
    const host = client(a.url);
    const session = await host.sessions.create({
      model: scripted({ toolCalls: [{ name: "slow", input: {} }] }, { text: "turn one" }, { text: "turn two" }),
      tools: [slow()],
    });
    await api(a.url, `/v1/sessions/${session.id}/messages`, { text: "start", wait: false });
    await untilSlow(async () => runs === 1);

    const killedAt = Date.now();
    await a.kill("SIGKILL");

    const ended = await untilSlow(async () => {
      const [row] = await db.sql<{ outcome: { status: string; cause: string }; at: number }[]>`
        SELECT outcome, (extract(epoch FROM ended_at) * 1000)::float8 AS at
        FROM tool_calls WHERE session_id = ${session.id} AND status = 'ended'`;
      return row;
    });
    expect(ended.outcome).toEqual({ status: "unknown", cause: "server_lost" });
    // The turn that was waiting on the lost call finishes on B.
    const resumed = await untilSlow(async () => {
      const [row] = await db.sql<{ text: string; at: number }[]>`
        SELECT payload->>'text' AS text, (extract(epoch FROM created_at) * 1000)::float8 AS at
        FROM journal WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
      return row;
    });
    expect(resumed.text).toBe("turn one");
    // Another live server (B, or one left from an earlier test) took the session over.
    const [owner] = await db.sql`SELECT owner_id FROM sessions WHERE id = ${session.id}`;
    expect(owner!.owner_id).not.toBe(a.id);
    expect(owner!.owner_id).not.toBeNull();
    // Later turns go on, asked through B.
    const next = await api<{ activation: { text: string } }>(b.url, `/v1/sessions/${session.id}/messages`, {
      text: "again",
      wait: true,
    });
    expect(next.activation.text).toBe("turn two");
    // The host saw its socket die and aborted the handler; the call was never sent again.
    await untilSlow(async () => aborted !== null);
    expect(runs).toBe(1);
    const [sent] = await db.sql`SELECT count(*)::int AS n FROM calls WHERE session_id = ${session.id}`;
    expect(sent!.n).toBe(1);
    console.log(
      `failover: call ended unknown ${Math.round(ended.at - killedAt)} ms after SIGKILL; ` +
        `turn resumed on the other server ${Math.round(resumed.at - killedAt)} ms after`,
    );
  });

  it("crash recovery on restart: a single server killed mid-call comes back and finishes the turn", async () => {
    const a = await server();
    let runs = 0;
    const slow = tool({
      name: "slow",
      description: "Never finishes by itself.",
      input: z.object({}),
      run: async (_input, ctx) => {
        runs++;
        await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      },
    });
    const host = client(a.url);
    const session = await host.sessions.create({
      model: scripted({ toolCalls: [{ name: "slow", input: {} }] }, { text: "recovered" }),
      tools: [slow()],
    });
    await api(a.url, `/v1/sessions/${session.id}/messages`, { text: "start", wait: false });
    await untilSlow(async () => runs === 1);
    await a.kill("SIGKILL");
    const restarted = await spawnServer({ databaseUrl: db.url, token, env: { BRAIN_DATA_DIR: a.dataDir } });
    servers.push(restarted);
    const text = await untilSlow(async () => {
      const [row] = await db.sql`
        SELECT payload->>'text' AS text FROM journal WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
      return row?.text as string | undefined;
    });
    expect(text).toBe("recovered");
    const [call] = await db.sql`SELECT outcome FROM tool_calls WHERE session_id = ${session.id}`;
    expect(call!.outcome).toEqual({ status: "unknown", cause: "server_lost" });
    expect(runs).toBe(1);
  });
  it("a deadline still fires after the server that armed it was killed (the pg-boss backstop, or its successor)", async () => {
    const a = await server();
    const never = tool({
      name: "never",
      description: "Its host is gone before it is called.",
      input: z.object({}),
      timeoutMs: 2500,
      run: async () => {},
    });
    const first = client(a.url);
    const session = await first.sessions.create({
      model: scripted({ toolCalls: [{ name: "never", input: {} }] }, { text: "timed out" }),
      tools: [never()],
    });
    await first.close(); // the call will wait for its host, pending, until its deadline
    await postMessage(a, session.id, "go");
    await untilSlow(async () => {
      const [row] = await db.sql`SELECT status FROM tool_calls WHERE session_id = ${session.id}`;
      return row?.status === "pending";
    });
    await a.kill("SIGKILL");
    servers.push(await spawnServer({ databaseUrl: db.url, token, env: { BRAIN_DATA_DIR: a.dataDir } }));
    const ended = await untilSlow(async () => {
      const [row] = await db.sql`SELECT status, outcome FROM tool_calls WHERE session_id = ${session.id}`;
      return row?.status === "ended" ? row : undefined;
    });
    expect(ended.outcome).toEqual({ status: "timeout", cause: "deadline" });
    const text = await untilSlow(async () => {
      const [row] = await db.sql`
        SELECT payload->>'text' AS text FROM journal WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
      return row?.text as string | undefined;
    });
    expect(text).toBe("timed out");
  });
});

describe("a server cut off past the stale window", () => {
  it("is declared dead by the others, then rejoins: its hosts reconnect and new calls reach them", async () => {
    const [a, b] = [await server(), await server()];
    let runs = 0;
    const quick = tool({
      name: "quick",
      description: "Answers at once.",
      input: z.object({}),
      run: async (_input, ctx) => {
        runs++;
        return ctx.finish({ n: runs });
      },
    });
    const host = client(a.url);
    const session = await host.sessions.create({
      model: scripted(
        { toolCalls: [{ name: "quick", input: {} }] },
        { text: "before" },
        { toolCalls: [{ name: "quick", input: {} }] },
        { text: "after" },
      ),
      tools: [quick()],
    });
    await expect(session.send("one")).resolves.toBe("before");
    // Frozen (as a long pause or a partition would leave it): its heartbeat goes stale, B declares it dead.
    a.child.kill("SIGSTOP");
    try {
      await untilSlow(async () => {
        const [row] = await db.sql`SELECT stopped_at FROM servers WHERE id = ${a.id}`;
        return row?.stopped_at !== null;
      });
    } finally {
      a.child.kill("SIGCONT");
    }
    // It finds itself declared dead at its next heartbeat and rejoins under the same id.
    await untilSlow(async () => {
      const [row] =
        await db.sql`SELECT stopped_at IS NULL AND heartbeat_at > now() - interval '2 seconds' AS live FROM servers WHERE id = ${a.id}`;
      return row?.live === true;
    });
    // Its host connections were closed by the declaration: the host reconnects and gets a live one,
    // so a new turn's call (asked through B) is dispatched and answered.
    const answer = await api<{ activation: { text: string } }>(b.url, `/v1/sessions/${session.id}/messages`, {
      text: "two",
      wait: true,
    });
    expect(answer.activation.text).toBe("after");
    expect(runs).toBe(2);
    expect(a.child.exitCode).toBeNull();
  });
});

describe("caller deadlines across servers", () => {
  it("a turn's deadline accepted by one server times the call out after its owner was killed", async () => {
    const [a, b] = [await server(), await server()];
    const unbounded = tool({
      name: "unbounded",
      description: "No run limit of its own; its host is gone before it is called.",
      input: z.object({}),
      run: async () => {},
    });
    const first = client(a.url);
    const session = await first.sessions.create({
      model: scripted({ toolCalls: [{ name: "unbounded", input: {} }] }, { text: "timed out" }),
      tools: [unbounded()],
      timeoutMs: 3_600_000,
    });
    await first.close(); // the call will wait for its host, pending, until the turn's deadline
    // Accepted by B, which resolves and journals the deadline; A owns the session and makes the call.
    await api(b.url, `/v1/sessions/${session.id}/messages`, { text: "go", timeoutMs: 4_000 });
    const pending = await untilSlow(async () => {
      const [row] = await db.sql`SELECT status FROM tool_calls WHERE session_id = ${session.id}`;
      return row?.status === "pending" ? row : undefined;
    });
    expect(pending).toBeTruthy();
    await a.kill("SIGKILL");
    const ended = await untilSlow(async () => {
      const [row] = await db.sql`
        SELECT status, outcome, (extract(epoch FROM deadline_at) * 1000)::float8 AS deadline,
               (extract(epoch FROM ended_at) * 1000)::float8 AS ended
          FROM tool_calls WHERE session_id = ${session.id}`;
      return row?.status === "ended" ? row : undefined;
    });
    const [message] = await db.sql`
      SELECT (payload->>'deadline')::float8 AS deadline FROM journal
       WHERE session_id = ${session.id} AND kind = 'user_message'`;
    expect(ended.outcome).toEqual({ status: "timeout", cause: "deadline" });
    expect(ended.deadline).toBe(message!.deadline);
    expect(ended.ended).toBeGreaterThanOrEqual(ended.deadline);
  });
});

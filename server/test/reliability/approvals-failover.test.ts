// An approval gate across servers' deaths: the call waits on server A, A is SIGKILLed, a person
// approves it (with edited input) on server B, and the call is dispatched once, with the approved
// input, and the turn goes on on B. Then with every server SIGKILLed while a call its predicate
// held waits: a new server and a reattached host pick it up, and it runs once. Real server
// processes on one database.
import { Brain, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

let db: TestDatabase;
const token = `approvals-${Date.now()}-token`;
const servers: ServerProcess[] = [];
const clients: Brain[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const s of servers) await s.kill().catch(() => {});
  await db?.drop();
});

async function server(): Promise<ServerProcess> {
  const s = await spawnServer({ databaseUrl: db.url, token, env: { BRAIN_LOG_LEVEL: "warn" } });
  servers.push(s);
  return s;
}

async function turnCompleted(sessionId: string): Promise<void> {
  await until(
    "the turn to complete",
    async () => {
      const [row] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM brain.journal
        WHERE session_id = ${sessionId} AND kind = 'activation_ended' AND payload->>'status' = 'completed'`;
      return row!.n > 0;
    },
    60_000,
  );
}

async function waitingCall(sessionId: string): Promise<number> {
  const { call } = await until("the call to wait for approval", async () => {
    const [row] = await db.sql<{ call: number }[]>`
      SELECT call::int AS call FROM brain.approvals WHERE session_id = ${sessionId}`;
    return row;
  });
  return call;
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

describe("an approval gate across a SIGKILL", () => {
  it("is decided on another server and dispatches once, with the approved input", async () => {
    const [a, b] = [await server(), await server()];
    const runs: unknown[] = [];
    const transfer = tool({
      name: "transfer",
      description: "Sends money.",
      input: z.object({ to: z.string(), amount: z.number() }),
      approval: "always",
      run: async (input, ctx) => {
        runs.push(input);
        return ctx.finish({ sent: input.amount });
      },
    });
    // The application's host connects to B, which lives.
    const host = new Brain({ url: b.url, token });
    clients.push(host);
    await host.sessions.create({ model: scripted(), tools: [transfer()] });
    const placed = transfer();
    const created = await api<{ id: string }>(a.url, "/v1/sessions", {
      model: scripted({ toolCalls: [{ name: "transfer", input: { to: "mallory", amount: 900 } }] }, { text: "done" }),
      tools: [placed.placement],
      hostId: host.credentials()!.hostId,
    });
    await host.sessions.get(created.id, { tools: [placed] });
    await api(a.url, `/v1/sessions/${created.id}/messages`, { text: "pay" });
    const call = await waitingCall(created.id);

    await a.kill("SIGKILL");
    const listed = await api<{ approvals: { call: number }[] }>(b.url, `/v1/sessions/${created.id}/approvals`);
    expect(listed.approvals.map((x) => x.call)).toEqual([call]);
    await api(b.url, `/v1/sessions/${created.id}/calls/${call}/approve`, { input: { to: "alice", amount: 9 } });

    // The turn goes on on B once A's heartbeat has gone stale.
    await turnCompleted(created.id);
    expect(runs).toEqual([{ to: "alice", amount: 9 }]);
    const kinds = await db.sql<{ kind: string }[]>`
      SELECT kind FROM brain.journal WHERE session_id = ${created.id} AND kind IN ('approval_decided', 'tool_call_ended')
      ORDER BY seq`;
    expect(kinds.map((k) => k.kind)).toEqual(["approval_decided", "tool_call_ended"]);
  }, 120_000);

  it("survives SIGKILLs of every server: a new one dispatches it once, unasked the second time", async () => {
    const [a, b] = [await server(), await server()];
    const runs: unknown[] = [];
    const asked: unknown[] = [];
    const transfer = tool({
      name: "transfer",
      description: "Sends money.",
      input: z.object({ to: z.string(), amount: z.number() }),
      approval: (input) => {
        asked.push(input);
        return input.amount > 100;
      },
      run: async (input, ctx) => {
        runs.push(input);
        return ctx.finish({ sent: input.amount });
      },
    });
    const host = new Brain({ url: b.url, token });
    clients.push(host);
    const created = await host.sessions.create({
      model: scripted({ toolCalls: [{ name: "transfer", input: { to: "bob", amount: 700 } }] }, { text: "done" }),
      tools: [transfer()],
    });
    await api(a.url, `/v1/sessions/${created.id}/messages`, { text: "pay" });
    const call = await waitingCall(created.id);
    expect(asked).toHaveLength(1);

    await Promise.all([a.kill("SIGKILL"), b.kill("SIGKILL")]);
    await host.close().catch(() => {});
    const c = await server();
    // The application comes back with its host's credentials and the same declarations.
    const again = new Brain({ url: c.url, token, credentials: host.credentials()! });
    clients.push(again);
    await again.sessions.get(created.id, { tools: [transfer()] });
    const listed = await api<{ approvals: { call: number }[] }>(c.url, `/v1/sessions/${created.id}/approvals`);
    expect(listed.approvals.map((x) => x.call)).toEqual([call]);
    await api(c.url, `/v1/sessions/${created.id}/calls/${call}/approve`, {});

    await turnCompleted(created.id);
    expect(runs).toEqual([{ to: "bob", amount: 700 }]);
    expect(asked).toHaveLength(1);
    const kinds = await db.sql<{ kind: string }[]>`
      SELECT kind FROM brain.journal WHERE session_id = ${created.id}
        AND kind IN ('approval_checked', 'approval_decided', 'tool_call_ended')
      ORDER BY seq`;
    expect(kinds.map((k) => k.kind)).toEqual(["approval_checked", "approval_decided", "tool_call_ended"]);
  }, 120_000);
});

// The journal console's read routes (/v1/console/*) and its static files, over HTTP against a real
// server: filters, validation of hostile queries, answers that match their contracts, and files
// that are served only from the console's own directory. The page itself: console.test.ts.
import { randomUUID } from "node:crypto";
import {
  ConsoleCallListSchema,
  ConsoleHostListSchema,
  ConsoleProcessListSchema,
  ConsoleSessionListSchema,
  CreatedTokenSchema,
  SessionSchema,
} from "@aexhq/brain-contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { connectHost, registerHostOn, socketsClosedAfterAll } from "../../../testkit/host-sockets.js";
import { until } from "../../../testkit/wait.js";

const server = startedBeforeAll(() => startBrain());
const sockets = socketsClosedAfterAll();

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

async function call(method: string, path: string, options: { token?: string | null; body?: unknown } = {}) {
  const token = options.token === undefined ? server.token : options.token;
  const response = await fetch(`${server.url}${path}`, {
    method,
    redirect: "manual",
    headers: {
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, headers: response.headers, text, json } satisfies Answer;
}

function expectCode(answer: Answer, status: number, code: string) {
  expect(answer.status, answer.text).toBe(status);
  expect((answer.json as { error: { code: string } }).error.code).toBe(code);
}

const lookup = {
  name: "lookup",
  description: "Looks up one record.",
  inputSchema: { type: "object" },
  outputSchema: null,
  env: { type: "host", name: "app" },
};

/** An operator's session on a host that never connects: its one call stays pending. */
async function sessionWithPendingCall() {
  const host = await call("POST", "/v1/hosts", { body: { name: "absent host" } });
  expect(host.status, host.text).toBe(201);
  const hostId = (host.json as { id: string }).id;
  const created = await call("POST", "/v1/sessions", {
    body: {
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "1" } }] }] },
      hostId,
      tools: [lookup],
    },
  });
  expect(created.status, created.text).toBe(201);
  const session = SessionSchema.parse(created.json);
  expect((await call("POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go" } })).status).toBe(201);
  const seq = await until("the call to be pending", async () => {
    const [row] = await server.db.sql<{ seq: number }[]>`
      SELECT seq FROM calls WHERE session_id = ${session.id} AND state = 'pending'`;
    return row?.seq;
  });
  return { session, hostId, seq };
}

async function sessions(query = "") {
  const answer = await call("GET", `/v1/console/sessions${query}`);
  expect(answer.status, answer.text).toBe(200);
  return ConsoleSessionListSchema.parse(answer.json).sessions;
}

describe("console read routes", () => {
  it("list sessions of every application, filtered by status, tool and time, with open calls", async () => {
    const pending = await sessionWithPendingCall();
    const token = CreatedTokenSchema.parse((await call("POST", "/v1/tokens", { body: { name: "billing" } })).json);
    const theirs = await call("POST", "/v1/sessions", {
      token: token.token,
      body: { model: { provider: "scripted", script: [] }, metadata: { team: "billing" } },
    });
    const app = SessionSchema.parse(theirs.json);
    expect((await call("POST", `/v1/sessions/${app.id}/end`, { token: token.token })).status).toBe(200);

    const all = await sessions();
    const mine = all.find((s) => s.id === pending.session.id);
    expect(mine).toMatchObject({
      status: "active",
      application: null,
      openCalls: 1,
      tools: ["lookup"],
      hostId: pending.hostId,
    });
    expect(mine?.lastSequence).toBeGreaterThanOrEqual(pending.seq);
    expect(mine?.lastRecordAt).not.toBeNull();
    expect(all.find((s) => s.id === app.id)).toMatchObject({
      status: "ended",
      application: "billing",
      openCalls: 0,
      metadata: { team: "billing" },
    });
    // Newest first.
    expect(all.map((s) => s.createdAt)).toEqual([...all.map((s) => s.createdAt)].sort().reverse());

    const ids = (list: { id: string }[]) => list.map((s) => s.id);
    expect(ids(await sessions("?status=ended"))).toContain(app.id);
    expect(ids(await sessions("?status=ended"))).not.toContain(pending.session.id);
    expect(ids(await sessions("?status=active"))).not.toContain(app.id);
    expect(ids(await sessions("?tool=lookup"))).toEqual(ids(all.filter((s) => s.tools.includes("lookup"))));
    expect(ids(await sessions("?tool=lookup"))).not.toContain(app.id);
    expect(await sessions("?tool=nosuchtool")).toEqual([]);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect(await sessions(`?since=${encodeURIComponent(future)}`)).toEqual([]);
    const at = all.find((s) => s.id === app.id)!.createdAt;
    const older = ids(await sessions(`?until=${encodeURIComponent(at)}`));
    expect(older).toContain(pending.session.id);
    expect(older).not.toContain(app.id);
    expect(ids(await sessions(`?since=${encodeURIComponent(at)}`))).toContain(app.id);
    expect(await sessions("?limit=1")).toHaveLength(1);
  });

  it("refuse malformed queries with invalid_request", async () => {
    for (const query of [
      "/v1/console/sessions?status=paused",
      "/v1/console/sessions?since=yesterday",
      // A local time says nothing about which instant it is.
      "/v1/console/sessions?since=2026-01-01T00:00:00",
      "/v1/console/sessions?since=2026-02-29T00:00:00Z",
      "/v1/console/sessions?until=0000-01-01T00:00:00Z",
      "/v1/console/sessions?limit=0",
      "/v1/console/sessions?limit=1000",
      "/v1/console/sessions?tool=has%20space",
      "/v1/console/sessions?tool=x&tool=y",
      "/v1/console/sessions?owner=me",
      "/v1/console/calls?open=maybe",
      "/v1/console/calls?session=not-a-uuid",
      "/v1/console/hosts?limit=-1",
      "/v1/console/processes?kind=worker",
    ]) {
      expectCode(await call("GET", query), 400, "invalid_request");
    }
  });

  it("answer any query with 200 or invalid_request, never a server error (property)", async () => {
    const key = fc.constantFrom("status", "tool", "since", "until", "limit", "open", "session", "x", "__proto__");
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom("active", "ended", "true", "1", "-1", "1e3", "0x10", "lookup", randomUUID()),
      fc
        .date({ min: new Date(-8_640_000_000_000_000), max: new Date(8_640_000_000_000_000), noInvalidDate: true })
        .map((d) => d.toISOString()),
      fc.integer().map(String),
    );
    const route = fc.constantFrom("sessions", "calls", "hosts", "processes");
    await fc.assert(
      fc.asyncProperty(route, fc.array(fc.tuple(key, value), { maxLength: 4 }), async (name, pairs) => {
        const answer = await call("GET", `/v1/console/${name}?${new URLSearchParams(pairs)}`);
        if (answer.status !== 200) expectCode(answer, 400, "invalid_request");
      }),
      { numRuns: 200 },
    );
  });

  it("need the operator's token", async () => {
    for (const path of ["/v1/console/sessions", "/v1/console/calls", "/v1/console/hosts", "/v1/console/processes"]) {
      expectCode(await call("GET", path, { token: null }), 401, "unauthorized");
      expectCode(await call("GET", path, { token: "not-the-token-at-all" }), 401, "unauthorized");
    }
  });

  it("list open calls oldest first, then recent ones with their outcome once ended", async () => {
    const { session, hostId, seq } = await sessionWithPendingCall();
    const open = await call("GET", `/v1/console/calls?open=true&session=${session.id}`);
    expect(open.status, open.text).toBe(200);
    const [pending] = ConsoleCallListSchema.parse(open.json).calls;
    expect(pending).toMatchObject({
      sessionId: session.id,
      sequence: seq,
      tool: "lookup",
      status: "pending",
      executor: "host",
      hostId,
      outcome: null,
      errorCode: null,
      endedAt: null,
    });
    expect(pending?.elapsedMs).toBeGreaterThanOrEqual(0);
    const everyOpen = ConsoleCallListSchema.parse((await call("GET", "/v1/console/calls?open=1")).json).calls;
    expect(everyOpen.every((c) => c.status !== "ended")).toBe(true);
    expect(everyOpen.map((c) => c.startedAt)).toEqual([...everyOpen.map((c) => c.startedAt)].sort());

    const hosts = ConsoleHostListSchema.parse((await call("GET", "/v1/console/hosts")).json).hosts;
    expect(hosts.find((h) => h.id === hostId)).toMatchObject({
      name: "absent host",
      named: false,
      application: null,
      connections: 0,
      pendingCalls: 1,
      runningCalls: 0,
      lastConnectedAt: null,
    });

    expect((await call("POST", `/v1/sessions/${session.id}/calls/${seq}/cancel`)).status).toBe(200);
    const after = ConsoleCallListSchema.parse(
      (await call("GET", `/v1/console/calls?open=true&session=${session.id}`)).json,
    );
    expect(after.calls).toEqual([]);
    const recent = ConsoleCallListSchema.parse(
      (await call("GET", `/v1/console/calls?tool=lookup&session=${session.id}`)).json,
    );
    expect(recent.calls).toHaveLength(1);
    expect(recent.calls[0]).toMatchObject({ status: "ended", outcome: "cancelled" });
    expect(recent.calls[0]?.endedAt).not.toBeNull();
  });

  it("count a connected host's sockets and running calls, on the host and on its server", async () => {
    const host = await registerHostOn(server, "connected host");
    const socket = await connectHost(server, host.id, host.token, sockets);
    expect((await socket.next()).type).toBe("welcome");
    const created = await call("POST", "/v1/sessions", {
      body: {
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "lookup", input: { id: "1" } }] }] },
        hostId: host.id,
        tools: [lookup],
      },
    });
    expect(created.status, created.text).toBe(201);
    const session = SessionSchema.parse(created.json);
    expect((await call("POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go" } })).status).toBe(201);
    expect((await socket.next()).type).toBe("invoke");

    const hosts = ConsoleHostListSchema.parse((await call("GET", "/v1/console/hosts")).json).hosts;
    expect(hosts.find((h) => h.id === host.id)).toMatchObject({ connections: 1, pendingCalls: 0, runningCalls: 1 });
    const serverId = ((await call("GET", "/healthz")).json as { serverId: string }).serverId;
    const processes = ConsoleProcessListSchema.parse((await call("GET", "/v1/console/processes")).json).processes;
    const self = processes.find((p) => p.id === serverId);
    // Other tests' sockets may be open on this server too: at least this one and its call.
    expect(self?.connections).toBeGreaterThanOrEqual(1);
    expect(self?.runningCalls).toBeGreaterThanOrEqual(1);
  });

  it("list Brain's processes: live, silent and stopped", async () => {
    const serverId = ((await call("GET", "/healthz")).json as { serverId: string }).serverId;
    const silent = randomUUID();
    const stopped = randomUUID();
    await server.db.sql`
      INSERT INTO servers (id, kind, started_at, heartbeat_at, stopped_at) VALUES
        (${silent}, 'worker', now() - interval '1 hour', now() - interval '1 minute', NULL),
        (${stopped}, 'worker', now() - interval '2 hours', now() - interval '1 hour', now() - interval '1 hour')`;
    const answer = await call("GET", "/v1/console/processes");
    expect(answer.status, answer.text).toBe(200);
    const processes = ConsoleProcessListSchema.parse(answer.json).processes;
    expect(processes.find((p) => p.id === serverId)).toMatchObject({ kind: "server", state: "live", stoppedAt: null });
    expect(processes.find((p) => p.id === silent)).toMatchObject({ kind: "worker", state: "silent" });
    expect(processes.find((p) => p.id === silent)?.heartbeatAgeMs).toBeGreaterThanOrEqual(59_000);
    expect(processes.find((p) => p.id === stopped)).toMatchObject({ state: "stopped" });
    // Processes not stopped come first.
    const states = processes.map((p) => p.state === "stopped");
    expect(states).toEqual([...states].sort((a, b) => Number(a) - Number(b)));
  });
});

describe("console files", () => {
  it("are served without a token, with a content security policy", async () => {
    const redirect = await call("GET", "/console", { token: null });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get("location")).toBe("/console/");
    const index = await call("GET", "/console/", { token: null });
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toMatch(/^text\/html/);
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect(index.text).toContain('<script type="module" src="main.js">');
    const script = await call("GET", "/console/main.js", { token: null });
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect((await call("GET", "/console/console.css", { token: null })).headers.get("content-type")).toMatch(
      /^text\/css/,
    );
  });

  it("are only the console's own: anything else is not_found", async () => {
    for (const path of [
      "/console/nope.js",
      "/console/..%2Fpackage.json",
      "/console/..%2F..%2Fpackage.json",
      "/console/%2e%2e%2fsrc%2fapp.ts",
      "/console/index.html%00.js",
    ]) {
      const answer = await call("GET", path, { token: null });
      expect(answer.status, path).toBe(404);
      expect(answer.text).not.toContain('"name"');
    }
  });
});

// What an application token may do: its own sessions and hosts, every route of the authenticated
// API checked against another application's (and the operator's) resources.
import { type ErrorCode, SessionListSchema } from "@aexhq/brain-contracts";
import { accessControl, accessOf, ROUTE_ACCESS } from "@aexhq/brain-server";
import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countRows, createSession, expectError, request, type Target } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import {
  createAppToken,
  registeredRoutes,
  sessionSnapshot,
  sessionWithPendingCall,
  withToken,
} from "./app-tokens-support.js";

let brain: InProcessBrain;
let a: Target;
let b: Target;
let aTokenId: string;

beforeAll(async () => {
  brain = await startBrain();
  const ta = await createAppToken(brain, "application a");
  const tb = await createAppToken(brain, "application b");
  a = withToken(brain, ta.token);
  b = withToken(brain, tb.token);
  aTokenId = ta.id;
});
afterAll(async () => {
  await brain?.close();
});

interface Fixture {
  session: string;
  call: number;
}

/** A request to one route, on a session of application a. */
interface SessionCase {
  path: (f: Fixture) => string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The status its owner (and the operator) get. */
  ok: number;
  /** The MCP endpoint refuses with JSON-RPC error bodies, Brain's code in `error.data.code`. */
  jsonRpc?: boolean;
  /** Its owner's answer is a stream that lasts the turn (the fixture's never ends): headers only. */
  stream?: boolean;
}

const MCP_PING = {
  body: { jsonrpc: "2.0", id: 1, method: "ping" },
  headers: { accept: "application/json, text/event-stream" },
};

/** Every route that acts on one session; another application gets not_found (HEAD: a bare 404). */
const SESSION_ROUTES: Record<string, SessionCase> = {
  "GET /v1/sessions/:id": { path: (f) => `/v1/sessions/${f.session}`, ok: 200 },
  "HEAD /v1/sessions/:id": { path: (f) => `/v1/sessions/${f.session}`, ok: 200 },
  "GET /v1/sessions/:id/tools": { path: (f) => `/v1/sessions/${f.session}/tools`, ok: 200 },
  "HEAD /v1/sessions/:id/tools": { path: (f) => `/v1/sessions/${f.session}/tools`, ok: 200 },
  "GET /v1/sessions/:id/events": { path: (f) => `/v1/sessions/${f.session}/events?after=0`, ok: 200 },
  "HEAD /v1/sessions/:id/events": { path: (f) => `/v1/sessions/${f.session}/events?after=0`, ok: 200 },
  "POST /v1/sessions/:id/messages": {
    path: (f) => `/v1/sessions/${f.session}/messages`,
    body: { text: "hi" },
    ok: 201,
  },
  "POST /v1/sessions/:id/chat": {
    path: (f) => `/v1/sessions/${f.session}/chat`,
    body: { messages: [{ id: "m", role: "user", parts: [{ type: "text", text: "hi" }] }] },
    ok: 200,
    stream: true,
  },
  "GET /v1/sessions/:id/chat/stream": { path: (f) => `/v1/sessions/${f.session}/chat/stream`, ok: 200, stream: true },
  "HEAD /v1/sessions/:id/chat/stream": { path: (f) => `/v1/sessions/${f.session}/chat/stream`, ok: 200, stream: true },
  "GET /v1/sessions/:id/approvals": { path: (f) => `/v1/sessions/${f.session}/approvals`, ok: 200 },
  "HEAD /v1/sessions/:id/approvals": { path: (f) => `/v1/sessions/${f.session}/approvals`, ok: 200 },
  // The fixture's call does not wait for approval: its owner is told so, as the operator is.
  "POST /v1/sessions/:id/calls/:seq/approve": {
    path: (f) => `/v1/sessions/${f.session}/calls/${f.call}/approve`,
    body: {},
    ok: 409,
  },
  "POST /v1/sessions/:id/calls/:seq/deny": {
    path: (f) => `/v1/sessions/${f.session}/calls/${f.call}/deny`,
    body: {},
    ok: 409,
  },
  "POST /v1/sessions/:id/cancel": { path: (f) => `/v1/sessions/${f.session}/cancel`, ok: 200 },
  "POST /v1/sessions/:id/calls/:seq/cancel": {
    path: (f) => `/v1/sessions/${f.session}/calls/${f.call}/cancel`,
    ok: 200,
  },
  "POST /v1/sessions/:id/mcp": { path: (f) => `/v1/sessions/${f.session}/mcp`, ...MCP_PING, ok: 200, jsonRpc: true },
  "GET /v1/sessions/:id/mcp": { path: (f) => `/v1/sessions/${f.session}/mcp`, ok: 405, jsonRpc: true },
  "HEAD /v1/sessions/:id/mcp": { path: (f) => `/v1/sessions/${f.session}/mcp`, ok: 405 },
  "DELETE /v1/sessions/:id/mcp": { path: (f) => `/v1/sessions/${f.session}/mcp`, ok: 405, jsonRpc: true },
  "POST /v1/sessions/:id/fork": { path: (f) => `/v1/sessions/${f.session}/fork`, body: { at: 1 }, ok: 201 },
  "POST /v1/sessions/:id/end": { path: (f) => `/v1/sessions/${f.session}/end`, ok: 200 },
  "DELETE /v1/sessions/:id": { path: (f) => `/v1/sessions/${f.session}`, ok: 204 },
};

/** Routes only the operator may use: an application token gets forbidden, and nothing changes. */
const OPERATOR_ROUTES: Record<string, { path: string; body?: unknown }> = {
  "POST /v1/tokens": { path: "/v1/tokens", body: { name: "minted by an application" } },
  "GET /v1/tokens": { path: "/v1/tokens" },
  "HEAD /v1/tokens": { path: "/v1/tokens" },
  "PATCH /v1/tokens/:id": { path: "/v1/tokens/{a}", body: { quotas: { sessions: 1000 } } },
  "DELETE /v1/tokens/:id": { path: "/v1/tokens/{a}" },
  // BRAIN_METRICS=token, the default (server/test/observability/metrics.test.ts).
  "GET /metrics": { path: "/metrics" },
  "HEAD /metrics": { path: "/metrics" },
  // The journal console's reads: every application's sessions, calls, hosts and processes.
  "GET /v1/console/sessions": { path: "/v1/console/sessions" },
  "HEAD /v1/console/sessions": { path: "/v1/console/sessions" },
  "GET /v1/console/calls": { path: "/v1/console/calls?open=true" },
  "HEAD /v1/console/calls": { path: "/v1/console/calls" },
  "GET /v1/console/hosts": { path: "/v1/console/hosts" },
  "HEAD /v1/console/hosts": { path: "/v1/console/hosts" },
  "GET /v1/console/processes": { path: "/v1/console/processes" },
  "HEAD /v1/console/processes": { path: "/v1/console/processes" },
};

/** Routes any caller may use, each scoped by its handler: tested one by one below. */
const SHARED_ROUTES = [
  "POST /v1/hosts",
  // Scoped to the caller's namespace of named hosts: server/test/hosts/named-hosts.test.ts.
  "POST /v1/named-hosts/:name/replicas",
  "POST /v1/sessions",
  "GET /v1/sessions",
  "HEAD /v1/sessions",
  "HEAD /v1/components/:sha256",
  "PUT /v1/components/:sha256",
];

/** Routes outside the authenticated API, each with a credential of its own (tested elsewhere). */
const OWN_CREDENTIALS = [
  "GET /healthz",
  "HEAD /healthz",
  "GET /readyz",
  "HEAD /readyz",
  // Public, as API descriptions are (server/test/observability/openapi.test.ts).
  "GET /openapi.json",
  "HEAD /openapi.json",
  // Public keys, which verify and cannot sign (server/test/http-tools/http-tools-signatures.test.ts).
  "GET /v1/keys",
  "HEAD /v1/keys",
  "GET /v1/hosts/:id/connect",
  "HEAD /v1/hosts/:id/connect",
  "GET /v1/replicas/:id/connect",
  "HEAD /v1/replicas/:id/connect",
  "POST /v1/calls/:sessionId/:sequence/frames",
  "POST /v1/calls/:sessionId/:sequence/model",
];

/** The console's static files: public, they hold no data (tested in observability/console.test.ts). */
const PUBLIC_FILES = [
  "GET /console",
  "HEAD /console",
  "GET /console/",
  "HEAD /console/",
  "GET /console/:file",
  "HEAD /console/:file",
];

const method = (route: string) => route.split(" ")[0]!;

describe("every route is covered", () => {
  it("the tables above name exactly the routes the server registered", () => {
    const tested = [
      ...Object.keys(SESSION_ROUTES),
      ...Object.keys(OPERATOR_ROUTES),
      ...SHARED_ROUTES,
      ...OWN_CREDENTIALS,
      ...PUBLIC_FILES,
    ].sort();
    expect(registeredRoutes(brain.app)).toEqual(tested);
  });

  it("the server's access rules agree with the tables", () => {
    for (const route of Object.keys(SESSION_ROUTES))
      expect(accessOf(method(route), route.split(" ")[1]!)).toBe("session");
    for (const route of Object.keys(OPERATOR_ROUTES))
      expect(accessOf(method(route), route.split(" ")[1]!)).toBe("operator");
    for (const route of SHARED_ROUTES) expect(accessOf(method(route), route.split(" ")[1]!), route).toBe("any");
    for (const route of [...OWN_CREDENTIALS, ...PUBLIC_FILES])
      expect(accessOf(method(route), route.split(" ")[1]!)).toBeUndefined();
    expect(Object.keys(ROUTE_ACCESS).length).toBeGreaterThan(0);
  });

  it("a route added to the authenticated API without an access rule stops the server from starting", async () => {
    const app = Fastify();
    app.register(async (api) => {
      accessControl(api);
      api.get("/v1/sessions/:id/secrets", async () => ({}));
    });
    await expect(app.ready()).rejects.toThrow(/no entry in ROUTE_ACCESS/);
    await app.close().catch(() => {});
  });
});

describe("another application's session is not_found on every session route", () => {
  let operatorSession: string;
  beforeAll(async () => {
    operatorSession = (await createSession(brain)).id;
  });

  it.each(Object.entries(SESSION_ROUTES))("%s", async (route, c) => {
    const own = await sessionWithPendingCall(a, brain.db.sql);
    const fixture = { session: own.session.id, call: own.call };
    const before = await sessionSnapshot(brain.db.sql, fixture.session);
    const opBefore = await sessionSnapshot(brain.db.sql, operatorSession);
    const send = (target: Target, f: Fixture, headersOnly = false) =>
      request(target, method(route), c.path(f), {
        ...(c.body === undefined ? {} : { body: c.body }),
        ...(c.headers === undefined ? {} : { headers: c.headers }),
        headersOnly,
      });
    const denied = [await send(b, fixture), await send(a, { session: operatorSession, call: 1 })];
    for (const answer of denied) {
      if (method(route) === "HEAD") expect(answer.status).toBe(404);
      else if (c.jsonRpc) {
        expect(answer.status, answer.text).toBe(404);
        expect(answer.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { data: { code: "not_found" } } });
      } else expectError(answer, "not_found");
    }
    // Nothing was written to either session.
    expect(await sessionSnapshot(brain.db.sql, fixture.session)).toBe(before);
    expect(await sessionSnapshot(brain.db.sql, operatorSession)).toBe(opBefore);
    // Its owner may, and so may the operator (on another session of a, for the destructive routes).
    const mine = await send(a, fixture, c.stream);
    expect(mine.status, mine.text).toBe(c.ok);
    const other = await sessionWithPendingCall(a, brain.db.sql);
    const admin = await send(brain, { session: other.session.id, call: other.call }, c.stream);
    expect(admin.status, admin.text).toBe(c.ok);
  });

  it("a malformed session id is invalid_request, as it is for the operator", async () => {
    expectError(await request(a, "GET", "/v1/sessions/not-a-uuid"), "invalid_request");
    expectError(await request(brain, "GET", "/v1/sessions/not-a-uuid"), "invalid_request");
  });
});

describe("routes only the operator may use", () => {
  it.each(Object.entries(OPERATOR_ROUTES))("%s is forbidden to an application token", async (route, c) => {
    const victim = await createAppToken(brain, "victim");
    const rows = async () => brain.db.sql`SELECT id, name, revoked_at FROM app_tokens ORDER BY id`;
    const before = await rows();
    const answer = await request(a, method(route), c.path.replace("{a}", victim.id), {
      ...(c.body === undefined ? {} : { body: c.body }),
    });
    if (method(route) === "HEAD") expect(answer.status).toBe(403);
    else expectError(answer, "forbidden");
    expect(answer.text).not.toContain(victim.token);
    expect(await rows()).toEqual(before);
  });
});

describe("routes any caller may use, scoped to the caller", () => {
  it("POST /v1/hosts: a host belongs to its application; another cannot place sessions on it", async () => {
    const host = await request(b, "POST", "/v1/hosts", { body: { name: "b's host" } });
    expect(host.status).toBe(201);
    const hostId = (host.json as { id: string }).id;
    const before = await countRows(brain.db.sql);
    const body = {
      model: { provider: "scripted", script: [] },
      hostId,
      tools: [
        {
          name: "t",
          description: "A tool.",
          inputSchema: { type: "object" },
          outputSchema: null,
          env: { type: "host", name: "app" },
        },
      ],
    };
    // Answered exactly as for a host that does not exist.
    const refused = expectError(await request(a, "POST", "/v1/sessions", { body }), "invalid_request");
    const missing = expectError(
      await request(a, "POST", "/v1/sessions", { body: { ...body, hostId: "00000000-0000-4000-8000-000000000000" } }),
      "invalid_request",
    );
    expect(refused).toEqual(missing);
    expect(await countRows(brain.db.sql)).toEqual(before);
    // Its own application and the operator may.
    expect((await request(b, "POST", "/v1/sessions", { body })).status).toBe(201);
    expect((await request(brain, "POST", "/v1/sessions", { body })).status).toBe(201);
    // An operator's host is nobody's application's.
    const opHost = (await request(brain, "POST", "/v1/hosts", { body: {} })).json as { id: string };
    expectError(await request(a, "POST", "/v1/sessions", { body: { ...body, hostId: opHost.id } }), "invalid_request");
  });

  it("POST /v1/sessions records the owner; the same Idempotency-Key in two applications makes two sessions", async () => {
    const headers = { "idempotency-key": "shared-key" };
    const body = { model: { provider: "scripted", script: [] }, metadata: { k: "v" } };
    const ofA = await request(a, "POST", "/v1/sessions", { body, headers });
    const ofB = await request(b, "POST", "/v1/sessions", { body, headers });
    expect([ofA.status, ofB.status]).toEqual([201, 201]);
    const idA = (ofA.json as { id: string }).id;
    const idB = (ofB.json as { id: string }).id;
    expect(idB).not.toBe(idA);
    // Replays stay within each application.
    expect(((await request(a, "POST", "/v1/sessions", { body, headers })).json as { id: string }).id).toBe(idA);
    const [row] = await brain.db.sql<{ token_id: string }[]>`SELECT token_id FROM sessions WHERE id = ${idA}`;
    expect(row?.token_id).toBe(aTokenId);
  });

  it("GET /v1/sessions lists only the caller's sessions, across pages; the operator's lists all", async () => {
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push((await createSession(b)).id);
    await createSession(a);
    await createSession(brain);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const answer = await request(b, "GET", `/v1/sessions?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(answer.status).toBe(200);
      const page = SessionListSchema.parse(answer.json);
      seen.push(...page.sessions.map((s) => s.id));
      cursor = page.nextCursor;
    } while (cursor);
    const [{ n } = { n: 0 }] = await brain.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM sessions s JOIN app_tokens t ON t.id = s.token_id WHERE t.name = 'application b'`;
    expect(seen.length).toBe(n);
    expect(seen).toEqual(expect.arrayContaining(mine));
    const owners = await brain.db.sql<{ token_id: string | null }[]>`
      SELECT DISTINCT token_id FROM sessions WHERE id = ANY(${seen}::uuid[])`;
    expect(owners).toHaveLength(1);
    expect((await request(b, "HEAD", "/v1/sessions")).status).toBe(200);
    const all = SessionListSchema.parse((await request(brain, "GET", "/v1/sessions?limit=200")).json);
    const [{ total } = { total: 0 }] = await brain.db.sql<
      { total: number }[]
    >`SELECT count(*)::int AS total FROM sessions`;
    expect(all.sessions.length).toBe(total);
  });

  it("components are shared: their digest names their content", async () => {
    const sha = "ab".repeat(32);
    await brain.db.sql`INSERT INTO components (sha256, bytes, size, wit) VALUES (${sha}, '\\x00', 1, 'brain:tool')`;
    expect((await request(b, "HEAD", `/v1/components/${sha}`)).status).toBe(200);
    expect((await request(b, "HEAD", `/v1/components/${"cd".repeat(32)}`)).status).toBe(404);
    // An upload is admitted like the operator's (here refused for its content, not its caller).
    const upload = await request(b, "PUT", `/v1/components/${"cd".repeat(32)}`, {
      raw: new Uint8Array([0, 97, 115, 109]),
      contentType: "application/wasm",
    });
    expectError(upload, "invalid_component" satisfies ErrorCode);
  });
});

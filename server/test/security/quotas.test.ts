// Finding 3 of the tenant review: nothing was counted per token. The operator now sets quotas per
// application token (active sessions, hosts, open calls, component bytes), or server-wide defaults
// for tokens without their own; past one, creation is refused quota_exceeded (nothing is stored)
// and a call past the open-calls quota ends quota_exceeded without running. Worker jobs carry their
// owner's group, which the workers share out fairly (worker/test/fair-shares.test.ts).
import { createHash } from "node:crypto";
import { describe, expect, it, vi } from "vitest";
import { request, type Target } from "../../../testkit/api.js";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { testComponent } from "../../../testkit/components.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { withToken } from "./app-tokens-support.js";

const stack = startedBeforeAll(() => startBrainWithWorker({ BRAIN_QUOTA_HOSTS: "1" }), { timeoutMs: 120_000 });
const operator = (): Target => ({ url: stack.brain.url, token: stack.brain.token });

const idle = { provider: "scripted", script: [{ text: "idle" }] };
const hostTool = (name: string) => ({
  name,
  description: "Runs in the application.",
  inputSchema: { type: "object" },
  outputSchema: null,
  env: { type: "host", name: "app" },
});

async function tokenWith(quotas: Record<string, number | null>): Promise<{ id: string; app: Target }> {
  const created = await request(operator(), "POST", "/v1/tokens", { body: { name: "tenant", quotas } });
  expect(created.status, created.text).toBe(201);
  const token = created.json as { id: string; token: string; quotas: unknown };
  expect(token.quotas).toEqual({ sessions: null, hosts: null, openCalls: null, componentBytes: null, ...quotas });
  return { id: token.id, app: withToken(operator(), token.token) };
}

const createSessionAs = (app: Target, body: Record<string, unknown> = {}) =>
  request(app, "POST", "/v1/sessions", { body: { model: idle, ...body } });

describe("quotas per application token", () => {
  it("refuses a session past the active-sessions quota, never overshooting, and counts only active ones", async () => {
    const { id, app } = await tokenWith({ sessions: 2 });
    const answers = await Promise.all(Array.from({ length: 6 }, () => createSessionAs(app)));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 429, 429, 429, 429]);
    const refused = answers.find((a) => a.status === 429)!.json as { error: Record<string, unknown> };
    expect(refused.error).toMatchObject({ code: "quota_exceeded", details: { quota: "sessions", limit: 2, used: 2 } });
    const [row] = await stack.brain.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM brain.sessions WHERE token_id = ${id}`;
    expect(row?.n).toBe(2);
    const first = answers.find((a) => a.status === 201)!.json as { id: string };
    expect((await request(app, "POST", `/v1/sessions/${first.id}/end`)).status).toBe(200);
    expect((await createSessionAs(app)).status).toBe(201);
  });

  it("is the operator's to change: a token's own quota, null for the server's default", async () => {
    const { id, app } = await tokenWith({ sessions: 0 });
    expect((await createSessionAs(app)).status).toBe(429);
    const raised = await request(operator(), "PATCH", `/v1/tokens/${id}`, { body: { quotas: { sessions: 1 } } });
    expect([raised.status, (raised.json as { quotas: unknown }).quotas]).toEqual([
      200,
      { sessions: 1, hosts: null, openCalls: null, componentBytes: null },
    ]);
    expect((await createSessionAs(app)).status).toBe(201);
    // An application token may not change its own.
    const own = await request(app, "PATCH", `/v1/tokens/${id}`, { body: { quotas: { sessions: 100 } } });
    expect((own.json as { error: { code: string } }).error.code).toBe("forbidden");
    // The server's default (BRAIN_QUOTA_HOSTS=1 here) applies to a token without its own.
    expect((await request(app, "POST", "/v1/hosts", { body: {} })).status).toBe(201);
    const second = await request(app, "POST", "/v1/hosts", { body: {} });
    expect((second.json as { error: { details: unknown } }).error.details).toMatchObject({ quota: "hosts", limit: 1 });
    await request(operator(), "PATCH", `/v1/tokens/${id}`, { body: { quotas: { hosts: 2 } } });
    expect((await request(app, "POST", "/v1/hosts", { body: {} })).status).toBe(201);
    // The operator has no quota.
    for (let i = 0; i < 3; i++) expect((await request(operator(), "POST", "/v1/hosts", { body: {} })).status).toBe(201);
  });

  it("ends calls past the open-calls quota quota_exceeded, without running them", async () => {
    const { app } = await tokenWith({ openCalls: 2, hosts: 5 });
    const host = await request(app, "POST", "/v1/hosts", { body: {} });
    // The host never connects: the calls it is given stay open.
    const created = await createSessionAs(app, {
      model: {
        provider: "scripted",
        script: [{ toolCalls: ["a", "b", "c"].map((name) => ({ name, input: {} })) }, { text: "done" }],
      },
      hostId: (host.json as { id: string }).id,
      tools: ["a", "b", "c"].map(hostTool),
    });
    const session = created.json as { id: string };
    expect((await request(app, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go" } })).status).toBe(
      201,
    );
    const calls = await vi.waitFor(
      async () => {
        const rows = await stack.brain.db.sql<{ tool: string; state: string; code: string | null }[]>`
          SELECT tool, state, outcome->'error'->>'code' AS code FROM brain.calls
          WHERE session_id = ${session.id} ORDER BY seq`;
        expect(rows.map((r) => r.state)).toEqual(["pending", "pending", "ended"]);
        return rows;
      },
      { timeout: 10_000 },
    );
    expect(calls.map((c) => [c.tool, c.code])).toEqual([
      ["a", null],
      ["b", null],
      ["c", "quota_exceeded"],
    ]);
  });

  it("charges uploaded component bytes, once per component", async () => {
    const wasm = await testComponent("script");
    const sha = createHash("sha256").update(wasm).digest("hex");
    const put = (app: Target) =>
      fetch(`${app.url}/v1/components/${sha}`, {
        method: "PUT",
        headers: { authorization: `Bearer ${app.token}`, "content-type": "application/wasm" },
        body: wasm,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { code: string } } }));
    const small = await tokenWith({ componentBytes: 1024 });
    const refused = await put(small.app);
    expect([refused.status, refused.body.error?.code]).toEqual([429, "quota_exceeded"]);
    const roomy = await tokenWith({ componentBytes: wasm.length });
    expect((await put(roomy.app)).status).toBe(201);
    // Uploading it again costs nothing more.
    expect((await put(roomy.app)).status).toBe(201);
    const [charged] = await stack.brain.db.sql<{ n: number }[]>`
      SELECT coalesce(sum(size), 0)::int AS n FROM brain.component_uploads WHERE token_id = ${roomy.id}`;
    expect(charged?.n).toBe(wasm.length);
  });

  it("puts each worker call's job in its session owner's group", async () => {
    const { id, app } = await tokenWith({});
    const created = await createSessionAs(app, {
      model: { provider: "scripted", script: [{ toolCalls: [{ name: "check", input: {} }] }, { text: "done" }] },
      environments: [{ type: "http", name: "api", baseUrl: "http://127.0.0.1:9" }],
      tools: [
        {
          name: "check",
          description: "Checks.",
          inputSchema: { type: "object" },
          outputSchema: null,
          env: { type: "http", name: "api" },
          implementation: { type: "descriptor", descriptor: { type: "http_json", method: "GET", path: "/x" } },
        },
      ],
    });
    const session = created.json as { id: string };
    await request(app, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go" } });
    await vi.waitFor(
      async () => {
        const [job] = await stack.brain.db.sql<{ group_id: string }[]>`
          SELECT group_id FROM brain_boss.job WHERE name = 'brain-calls' AND data->>'sessionId' = ${session.id}`;
        expect(job?.group_id).toBe(id);
      },
      { timeout: 10_000 },
    );
  });
});

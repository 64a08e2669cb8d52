// Descriptor tools in HTTP Environments, end to end: a real server, a real worker, a local
// node:http server standing in for the GitHub API, and scripted models.

import { brainEnv, httpEnv, type PlacedTool, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { dumpSchemas } from "../../../testkit/api.js";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { until } from "../../../testkit/wait.js";
import {
  callOutcomes,
  fetchIssue,
  githubEnv,
  journalOf,
  SECRET_TOKEN,
  type SeenRequest,
  startFakeApi,
} from "./environments-support.js";

/** Released by the concurrency test; other setups answer at once. */
let releaseSlowSetup: (() => void) | null = null;
let slowSetupGate: Promise<void> = Promise.resolve();

const stack = startedBeforeAll(() => startBrainWithWorker());
const api = startedBeforeAll(() => startFakeApi(route));

/** The stand-in GitHub API's answers, by path. */
async function route(r: SeenRequest) {
  const issue = /^\/repos\/aexhq\/brain\/issues\/(\d+)$/.exec(r.path);
  if (r.method === "GET" && issue) {
    const n = Number(issue[1]);
    if (n === 404) return { status: 404, json: { message: "Not Found", detail: "x".repeat(5000) } };
    if (n === 13) return { json: { number: n, title: 13, state: "open" } };
    return { json: { number: n, title: `Issue ${n}`, state: "open" } };
  }
  if (r.path === "/repos/aexhq/brain/issues") {
    if (r.method === "GET") return { json: [{ number: 1, state: r.query.get("state") }] };
    return { status: 201, json: { created: JSON.parse(r.body) } };
  }
  if (r.path === "/echo") return { json: { youSent: r.headers.authorization } };
  if (r.path === "/text") return { text: "plain words" };
  if (r.path === "/setup-ok") return { json: { ok: true } };
  if (r.path === "/setup-slow") {
    await slowSetupGate;
    return { json: { ok: true } };
  }
  if (r.path === "/setup-fail") return { status: 500, json: { message: "the sandbox is broken" } };
  return { status: 404, json: { message: "no route" } };
}

/** A session whose scripted model asks for `calls` (all in one step), then says "done". */
async function runTurn(tools: PlacedTool[], calls: { name: string; input: unknown }[][]) {
  const session = await stack.client.sessions.create({
    model: {
      provider: "scripted",
      script: [...calls.map((step) => ({ toolCalls: step as never })), { text: "done" }],
    },
    tools,
  });
  expect(await session.send("go")).toBe("done");
  return session.id;
}

describe("the http_json descriptor", () => {
  it("runs the seed's fetch_issue: path template, the Environment's headers, the JSON answer", async () => {
    const before = api.seen.length;
    const placed = fetchIssue({ env: githubEnv(api), repository: "aexhq/brain" });
    expect(placed.placement.implementation).toEqual({
      type: "descriptor",
      descriptor: { type: "http_json", method: "GET", path: "/repos/aexhq/brain/issues/{number}" },
    });
    const sessionId = await runTurn([placed], [[{ name: "fetch_issue", input: { number: 42 } }]]);
    expect(await callOutcomes(stack.brain.db.sql, sessionId)).toEqual([
      { status: "ok", value: { number: 42, title: "Issue 42", state: "open" } },
    ]);
    const [request, ...rest] = api.seen.slice(before);
    expect(rest).toEqual([]);
    expect(request).toMatchObject({ method: "GET", path: "/repos/aexhq/brain/issues/42", body: "" });
    expect(request!.headers.authorization).toBe(`Bearer ${SECRET_TOKEN}`);
    expect(request!.headers["x-github-api-version"]).toBe("2022-11-28");
    expect(request!.headers.accept).toBe("application/json");
  });

  it("maps the other input fields to the query string (GET) or a JSON body (POST)", async () => {
    const listIssues = tool({
      name: "list_issues",
      description: "List issues.",
      input: z.object({ owner: z.string(), repo: z.string(), state: z.string(), labels: z.array(z.string()) }),
      implementation: () => ({ type: "http_json", method: "GET", path: "/repos/{owner}/{repo}/issues" }),
    });
    const createIssue = tool({
      name: "create_issue",
      description: "Create an issue.",
      input: z.object({ owner: z.string(), repo: z.string(), title: z.string(), body: z.string() }),
      implementation: () => ({ type: "http_json", method: "POST", path: "/repos/{owner}/{repo}/issues" }),
    });
    const env = githubEnv(api);
    const before = api.seen.length;
    const sessionId = await runTurn(
      [listIssues({ env }), createIssue({ env })],
      [
        [{ name: "list_issues", input: { owner: "aexhq", repo: "brain", state: "open", labels: ["a b", "c"] } }],
        [{ name: "create_issue", input: { owner: "aexhq", repo: "brain", title: "T", body: "B & more" } }],
      ],
    );
    const [list, create] = api.seen.slice(before);
    expect(list!.method).toBe("GET");
    expect(list!.query.get("state")).toBe("open");
    expect(list!.query.getAll("labels")).toEqual(["a b", "c"]);
    expect([...list!.query.keys()].sort()).toEqual(["labels", "labels", "state"]);
    expect(create!.method).toBe("POST");
    expect(create!.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(create!.body)).toEqual({ title: "T", body: "B & more" });
    expect(await callOutcomes(stack.brain.db.sql, sessionId)).toEqual([
      { status: "ok", value: [{ number: 1, state: "open" }] },
      { status: "ok", value: { created: { title: "T", body: "B & more" } } },
    ]);
  });

  it("checks the answer against the output schema, and the input against the input schema", async () => {
    const typed = tool({
      name: "typed_issue",
      description: "Fetch one issue, typed.",
      input: z.object({ number: z.number().int() }),
      output: z.object({ number: z.number(), title: z.string() }),
      implementation: () => ({ type: "http_json", method: "GET", path: "/repos/aexhq/brain/issues/{number}" }),
    });
    const sessionId = await runTurn(
      [typed({ env: githubEnv(api) })],
      [
        [{ name: "typed_issue", input: { number: 7 } }],
        [{ name: "typed_issue", input: { number: 13 } }],
        [{ name: "typed_issue", input: { number: "seven" } }],
      ],
    );
    const [good, bad, badInput] = await callOutcomes(stack.brain.db.sql, sessionId);
    // Extra fields are stripped, as parsing with an ordinary z.object would.
    expect(good).toEqual({ status: "ok", value: { number: 7, title: "Issue 7" } });
    expect(bad).toMatchObject({ status: "error", error: { code: "invalid_output" } });
    expect(badInput).toMatchObject({ status: "error", error: { code: "invalid_input" } });
  });

  it("ends a non-2xx answer with http_error (status, a 2 KB excerpt of the body)", async () => {
    const sessionId = await runTurn(
      [fetchIssue({ env: githubEnv(api), repository: "aexhq/brain" })],
      [[{ name: "fetch_issue", input: { number: 404 } }]],
    );
    const [outcome] = await callOutcomes(stack.brain.db.sql, sessionId);
    expect(outcome).toMatchObject({ status: "error", error: { code: "http_error", details: { status: 404 } } });
    const body = (outcome!.error!.details as { body: string }).body;
    expect(body.startsWith('{"message":"Not Found"')).toBe(true);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(2048);
  });

  it("answers text as text, and refuses an unknown descriptor type as an unsupported runtime", async () => {
    const text = tool({
      name: "text",
      description: "Text.",
      input: z.object({}),
      implementation: () => ({ type: "http_json", method: "GET", path: "/text" }),
    });
    const grpc = tool({
      name: "grpc",
      description: "Not HTTP.",
      input: z.object({}),
      implementation: () => ({ type: "grpc", service: "x" }),
    });
    const env = githubEnv(api);
    const sessionId = await runTurn(
      [text({ env }), grpc({ env })],
      [[{ name: "text", input: {} }], [{ name: "grpc", input: {} }]],
    );
    const [answered, unsupported] = await callOutcomes(stack.brain.db.sql, sessionId);
    expect(answered).toEqual({ status: "ok", value: "plain words" });
    expect(unsupported).toMatchObject({ status: "error", error: { code: "setup_failed" } });
    expect(unsupported!.error!.message).toContain("unsupported runtime");
  });

  it("never leaves the base URL: not by the descriptor's path, not by a path parameter", async () => {
    const before = api.seen.length;
    const climb = tool({
      name: "escape",
      description: "d",
      input: z.object({}),
      implementation: () => ({ type: "http_json", method: "GET", path: "/../text" }),
    });
    const param = tool({
      name: "param",
      description: "d",
      input: z.object({ id: z.string() }),
      implementation: () => ({ type: "http_json", method: "GET", path: "/{id}" }),
    });
    const env = httpEnv({ name: "scoped", baseUrl: `${api.url}/repos` });
    const sessionId = await runTurn(
      [climb({ env }), param({ env })],
      [
        [{ name: "escape", input: {} }],
        [{ name: "param", input: { id: ".." } }],
        [{ name: "param", input: { id: "a/b?c" } }],
      ],
    );
    const [escaped, dotted, encoded] = await callOutcomes(stack.brain.db.sql, sessionId);
    expect(escaped).toMatchObject({ status: "error", error: { code: "setup_failed" } });
    expect(escaped!.error!.message).toContain("leaves the Environment's base URL");
    expect(dotted).toMatchObject({ status: "error", error: { code: "invalid_input" } });
    expect(encoded).toMatchObject({ status: "error", error: { code: "http_error" } });
    expect(api.seen.slice(before).map((r) => r.path)).toEqual(["/repos/a%2Fb%3Fc"]);
  });

  it("never lets a header value out: not in results, not in the journal, not in any table in clear", async () => {
    const echo = tool({
      name: "echo",
      description: "Echo.",
      input: z.object({}),
      implementation: () => ({ type: "http_json", method: "GET", path: "/echo" }),
    });
    const sessionId = await runTurn([echo({ env: githubEnv(api) })], [[{ name: "echo", input: {} }]]);
    // The fake API did get the header, and echoed it back.
    expect(api.to("/echo").at(-1)!.headers.authorization).toBe(`Bearer ${SECRET_TOKEN}`);
    expect(await callOutcomes(stack.brain.db.sql, sessionId)).toEqual([
      { status: "ok", value: { youSent: "[redacted]" } },
    ]);
    const everything = await dumpSchemas(stack.brain.db.sql, ["brain", "brain_boss"]);
    expect(everything).toContain("authorization"); // header names are public
    expect(everything).not.toContain(SECRET_TOKEN);
    const [sealed] = await stack.brain.db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM brain.session_secrets WHERE session_id = ${sessionId} AND name = 'environment:github'`;
    expect(sealed!.n).toBe(1);
  });
});

describe("setup", () => {
  const setupTool = (name: string) =>
    tool({
      name,
      description: "Fetch one issue.",
      input: z.object({ number: z.number().int() }),
      implementation: () => ({ type: "http_json", method: "GET", path: "/repos/aexhq/brain/issues/{number}" }),
    });

  it("runs before the first invocation, once", async () => {
    const before = api.seen.length;
    const env = githubEnv(api, { name: "prepared", setup: { method: "POST", path: "/setup-ok", body: { v: 1 } } });
    const sessionId = await runTurn(
      [setupTool("issue")({ env })],
      [[{ name: "issue", input: { number: 1 } }], [{ name: "issue", input: { number: 2 } }]],
    );
    expect(api.seen.slice(before).map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /setup-ok",
      "GET /repos/aexhq/brain/issues/1",
      "GET /repos/aexhq/brain/issues/2",
    ]);
    const setup = api.to("/setup-ok").at(-1)!;
    expect(JSON.parse(setup.body)).toEqual({ v: 1 });
    expect(setup.headers.authorization).toBe(`Bearer ${SECRET_TOKEN}`);
    expect((await callOutcomes(stack.brain.db.sql, sessionId)).map((o) => o.status)).toEqual(["ok", "ok"]);
    const [row] = await stack.brain.db.sql`
      SELECT status, setup_error FROM brain.environments WHERE session_id = ${sessionId} AND name = 'prepared'`;
    expect(row).toEqual({ status: "ready", setup_error: null });
  });

  it("a failed setup fails every invocation with setup_failed, and is not retried", async () => {
    const before = api.to("/setup-fail").length;
    const env = githubEnv(api, { name: "broken", setup: { method: "POST", path: "/setup-fail" } });
    const sessionId = await runTurn(
      [setupTool("issue")({ env })],
      [[{ name: "issue", input: { number: 1 } }], [{ name: "issue", input: { number: 2 } }]],
    );
    const outcomes = await callOutcomes(stack.brain.db.sql, sessionId);
    expect(outcomes).toHaveLength(2);
    for (const o of outcomes) {
      expect(o).toMatchObject({ status: "error", error: { code: "setup_failed" } });
      expect(o.error!.message).toContain("HTTP 500");
    }
    expect(api.to("/setup-fail").length - before).toBe(1);
    const [row] = await stack.brain.db.sql<{ status: string; setup_error: string }[]>`
      SELECT status, setup_error FROM brain.environments WHERE session_id = ${sessionId} AND name = 'broken'`;
    expect(row!.status).toBe("failed");
    expect(row!.setup_error).toContain("the sandbox is broken");
  });

  it("concurrent first calls run the setup once", async () => {
    const before = api.to("/setup-slow").length;
    slowSetupGate = new Promise<void>((resolve) => {
      releaseSlowSetup = resolve;
    });
    const env = githubEnv(api, { name: "slow", setup: { method: "POST", path: "/setup-slow" } });
    const session = await stack.client.sessions.create({
      model: {
        provider: "scripted",
        script: [{ toolCalls: [1, 2, 3].map((n) => ({ name: "issue", input: { number: n } })) }, { text: "done" }],
      },
      tools: [setupTool("issue")({ env })],
    });
    const turn = session.send("go");
    // The setup answers only once all three calls are claimed by the worker, waiting for it.
    await until("three calls running", async () => {
      const [row] = await stack.brain.db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM brain.calls WHERE session_id = ${session.id} AND state = 'running'`;
      return row!.n === 3 && api.to("/setup-slow").length > before;
    });
    releaseSlowSetup?.();
    expect(await turn).toBe("done");
    expect(api.to("/setup-slow").length - before).toBe(1);
    expect((await callOutcomes(stack.brain.db.sql, session.id)).map((o) => o.status)).toEqual(["ok", "ok", "ok"]);
  });
});

describe("environments and placements", () => {
  const base = { description: "d", inputSchema: { type: "object" }, outputSchema: null };
  const descriptor = { type: "descriptor", descriptor: { type: "http_json", method: "GET", path: "/x" } };

  async function create(body: object) {
    const res = await fetch(`${stack.brain.url}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${stack.brain.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: { provider: "scripted", script: [] }, ...body }),
    });
    return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
  }

  it("refuses two environments with one name: the server (400 duplicate_environment) and the SDK", async () => {
    const spec = { type: "http", name: "github", baseUrl: api.url };
    const twice = await create({
      tools: [{ ...base, name: "a", env: { type: "http", name: "github" }, implementation: descriptor }],
      environments: [spec, { ...spec, baseUrl: "http://127.0.0.1:1" }],
    });
    expect(twice.status).toBe(400);
    expect(twice.body.error?.code).toBe("duplicate_environment");
    const hostAndHttp = await create({
      tools: [
        { ...base, name: "a", env: { type: "http", name: "github" }, implementation: descriptor },
        { ...base, name: "b", env: { type: "host", name: "github", url: "http://127.0.0.1:1/tools" } },
      ],
      environments: [spec],
    });
    expect(hostAndHttp.body.error?.code).toBe("duplicate_environment");

    const one = fetchIssue({ env: httpEnv({ name: "github", baseUrl: api.url }), repository: "a/b" });
    const other = tool({
      name: "other",
      description: "d",
      input: z.object({}),
      implementation: () => ({ type: "http_json", method: "GET", path: "/" }),
    })({ env: httpEnv({ name: "github", baseUrl: "http://127.0.0.1:1" }) });
    await expect(
      stack.client.sessions.create({ model: { provider: "scripted", script: [] }, tools: [one, other] }),
    ).rejects.toMatchObject({ code: "duplicate_environment" });
  });

  it("keeps run tools out of HTTP Environments (SDK) and descriptors out of Brain environments (server)", async () => {
    const lookup = tool({ name: "lookup", description: "d", input: z.object({}), run: async () => null });
    expect(() => lookup({ env: httpEnv({ name: "github", baseUrl: api.url }) } as never)).toThrow(
      expect.objectContaining({ code: "invalid_options" }),
    );
    const inBrain = tool({
      name: "x",
      description: "d",
      input: z.object({}),
      implementation: () => ({ type: "http_json", method: "GET", path: "/" }),
    })({ env: brainEnv({ name: "b" }) });
    await expect(
      stack.client.sessions.create({ model: { provider: "scripted", script: [] }, tools: [inBrain] }),
    ).rejects.toMatchObject({ code: "invalid_placement" });
    const raw = await create({
      tools: [{ ...base, name: "a", env: { type: "brain", name: "b" }, implementation: descriptor }],
    });
    expect(raw.body.error?.code).toBe("invalid_placement");
    const unconfigured = await create({
      tools: [{ ...base, name: "a", env: { type: "http", name: "nowhere" }, implementation: descriptor }],
    });
    expect(unconfigured.body.error?.code).toBe("invalid_placement");
  });

  it("gives every tool of one binding that binding's authority", async () => {
    const before = api.seen.length;
    const a = httpEnv({ name: "a", baseUrl: api.url, headers: { authorization: "Bearer token-of-binding-a" } });
    const b = httpEnv({ name: "b", baseUrl: api.url, headers: { authorization: "Bearer token-of-binding-b" } });
    const second = tool({
      name: "second",
      description: "d",
      input: z.object({ number: z.number() }),
      implementation: () => ({ type: "http_json", method: "GET", path: "/repos/aexhq/brain/issues/{number}" }),
    });
    await runTurn(
      [fetchIssue({ env: a, repository: "aexhq/brain" }), second({ env: a })],
      [[{ name: "fetch_issue", input: { number: 1 } }], [{ name: "second", input: { number: 2 } }]],
    );
    await runTurn([second({ env: b })], [[{ name: "second", input: { number: 3 } }]]);
    expect(api.seen.slice(before).map((r) => r.headers.authorization)).toEqual([
      "Bearer token-of-binding-a",
      "Bearer token-of-binding-a",
      "Bearer token-of-binding-b",
    ]);
  });

  it("journals the call like any tool call", async () => {
    const sessionId = await runTurn(
      [fetchIssue({ env: githubEnv(api), repository: "aexhq/brain" })],
      [[{ name: "fetch_issue", input: { number: 5 } }]],
    );
    const kinds = (await journalOf(stack.brain.db.sql, sessionId)).map((r) => r.kind);
    expect(kinds).toEqual([
      "session_created",
      "user_message",
      "activation_started",
      "model_call_started",
      "model_call_ended",
      "tool_call_started",
      "tool_result",
      "tool_call_ended",
      "model_call_started",
      "model_call_ended",
      "assistant_message",
      "activation_ended",
    ]);
  });
});

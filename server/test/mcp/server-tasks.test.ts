// Brain as an MCP server with durable Tasks, driven by the official MCP SDK's client: a session's
// host tools listed and called plainly and as tasks, a task that outlives the SIGKILL of the server
// that created it, tasks/cancel reaching the host, tasks scoped to their principal, and hostile
// input answered with JSON-RPC errors. Two real server processes share one database; the host is
// the Brain SDK in this process, connected to the server that survives.
import { Brain, tool } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db/connect";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { type ServerProcess, spawnServer } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { type Deferred, deferred, within } from "../../../testkit/wait.js";

let db: TestDatabase;
const operatorToken = `mcp-${Date.now()}-operator-token`;
const servers: ServerProcess[] = [];
const brains: Brain[] = [];
const clients: Client[] = [];
/** The survivor, holding the host's connection; and the server the MCP client first talks to. */
let a: ServerProcess;
let b: ServerProcess;
let appToken: string;
let otherAppToken: string;
let sessionId: string;

/** Per-call hooks of the host's tools, keyed by the `id` argument. */
const gates = new Map<string, Deferred<void>>();
const invoked = new Map<string, Deferred<number>>();
const aborted = new Map<string, Deferred<unknown>>();
const hook = <T>(map: Map<string, Deferred<T>>, id: string) => {
  let d = map.get(id);
  if (!d) {
    d = deferred<T>();
    map.set(id, d);
  }
  return d;
};

const echo = tool({
  name: "echo",
  description: "Echoes its text.",
  input: z.object({ text: z.string() }),
  output: z.object({ text: z.string() }),
  run: async ({ text }, ctx) => ctx.finish({ text }),
});
const slow = tool({
  name: "slow",
  description: "Finishes when the test opens its gate.",
  input: z.object({ id: z.string() }),
  output: z.object({ done: z.string() }),
  run: async ({ id }, ctx) => {
    hook(invoked, id).resolve(ctx.sequence);
    await hook(gates, id).promise;
    return ctx.finish({ done: id });
  },
});
const hold = tool({
  name: "hold",
  description: "Runs until Brain stops it.",
  input: z.object({ id: z.string() }),
  run: async ({ id }, ctx) => {
    ctx.signal.addEventListener("abort", () => hook(aborted, id).resolve(ctx.signal.reason), { once: true });
    hook(invoked, id).resolve(ctx.sequence);
    await new Promise(() => {});
  },
});
const brief = tool({
  name: "brief",
  description: "Runs until its own deadline stops it.",
  input: z.object({ id: z.string() }),
  timeoutMs: 1500,
  run: async ({ id }, ctx) => {
    ctx.signal.addEventListener("abort", () => hook(aborted, id).resolve(ctx.signal.reason), { once: true });
    await new Promise(() => {});
  },
});
const fail = tool({
  name: "fail",
  description: "Always throws.",
  input: z.object({}),
  run: async () => {
    throw new Error("the tool broke");
  },
});

async function server(): Promise<ServerProcess> {
  const s = await spawnServer({ databaseUrl: db.url, token: operatorToken, env: { BRAIN_LOG_LEVEL: "warn" } });
  servers.push(s);
  return s;
}

async function mintAppToken(name: string): Promise<string> {
  const res = await fetch(`${a.url}/v1/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${operatorToken}`, "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });
  if (res.status !== 201) throw new Error(`POST /v1/tokens: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

function endpoint(base: string, query = "", session = sessionId): URL {
  return new URL(`${base}/v1/sessions/${session}/mcp${query}`);
}

/** The official SDK client, connected (initialize) to one server's endpoint with a bearer token. */
async function mcpClient(base: string, token = appToken, query = "", session = sessionId): Promise<Client> {
  const client = new Client({ name: "brain-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(endpoint(base, query, session), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  clients.push(client);
  return client;
}

async function journal(sql: Sql, session: string) {
  return sql<{ seq: number; kind: string; payload: Record<string, unknown> }[]>`
    SELECT seq, kind, payload FROM brain.records WHERE session_id = ${session} ORDER BY seq`;
}

/** A task-augmented tools/call through the SDK's task stream; resolves with the created task's id. */
async function startTask(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 600_000 },
  });
  for await (const message of stream) {
    if (message.type === "taskCreated") return message.task.taskId;
    throw new Error(`expected taskCreated first, got ${JSON.stringify(message)}`);
  }
  throw new Error("the task stream ended without a task");
}

async function rpcError(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

beforeAll(async () => {
  db = await createTestDatabase();
  a = await server();
  b = await server();
  appToken = await mintAppToken("mcp client");
  otherAppToken = await mintAppToken("another application");
  // The application's host connects to A and owns the session (and its tools).
  const host = new Brain({ url: a.url, token: appToken });
  brains.push(host);
  const session = await host.sessions.create({ model: scripted(), tools: [echo(), slow(), hold(), brief(), fail()] });
  sessionId = session.id;
}, 60_000);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => {});
  for (const h of brains) await h.close().catch(() => {});
  for (const s of servers) await s.kill().catch(() => {});
  await db?.drop();
});

describe("a session's tools over MCP", () => {
  it("lists the placements with their schemas, and a named set with ?tools=", async () => {
    const client = await mcpClient(b.url);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(["brief", "echo", "fail", "hold", "slow"]);
    const e = tools.find((t) => t.name === "echo")!;
    expect(e.description).toBe("Echoes its text.");
    expect(e.inputSchema).toMatchObject({
      type: "object",
      properties: { text: { type: "string" } },
      required: ["text"],
    });
    expect(e.outputSchema).toMatchObject({ type: "object", properties: { text: { type: "string" } } });
    expect(e.execution).toEqual({ taskSupport: "optional" });
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ requests: { tools: { call: {} } } });

    const named = await mcpClient(b.url, appToken, "?tools=echo,slow");
    expect((await named.listTools()).tools.map((t) => t.name).sort()).toEqual(["echo", "slow"]);
    const refused = await rpcError(named.callTool({ name: "hold", arguments: { id: "x" } }));
    expect(refused.code).toBe(-32602);
  });

  it("calls a tool plainly: a journaled Brain call the model never sees", async () => {
    const client = await mcpClient(b.url);
    await client.listTools();
    const result = await client.callTool({ name: "echo", arguments: { text: "hello" } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ text: "hello" });
    expect(result.content).toEqual([{ type: "text", text: JSON.stringify({ text: "hello" }) }]);
    const { sequence } = (result._meta as Record<string, { sequence: number }>)["com.aexhq.brain/call"]!;

    const records = await journal(db.sql, sessionId);
    const started = records.find((r) => r.seq === sequence)!;
    expect(started.kind).toBe("tool_call_started");
    expect(started.payload).toMatchObject({ tool: "echo", input: { text: "hello" }, activation: null });
    expect(started.payload.origin).toMatchObject({ type: "mcp" });
    // Not part of any turn: no activation, no model call.
    expect(records.filter((r) => r.kind === "activation_started" || r.kind === "model_call_started")).toEqual([]);
    const [row] = await db.sql<{ origin: string; activation_seq: number | null; status: string }[]>`
      SELECT origin, activation_seq, status FROM brain.tool_calls WHERE session_id = ${sessionId} AND seq = ${sequence}`;
    expect(row).toEqual({ origin: "mcp", activation_seq: null, status: "ended" });
  });

  it("runs a task to its result through the SDK's task stream, and a failing tool fails its task", async () => {
    const client = await mcpClient(b.url);
    await client.listTools();
    const seen: string[] = [];
    let final: unknown;
    for await (const m of client.experimental.tasks.callToolStream(
      { name: "echo", arguments: { text: "as a task" } },
      CallToolResultSchema,
      { task: { ttl: 60_000 } },
    )) {
      seen.push(m.type);
      if (m.type === "result") final = m.result;
      if (m.type === "error") throw m.error;
    }
    expect(seen[0]).toBe("taskCreated");
    expect(seen.at(-1)).toBe("result");
    expect(final).toMatchObject({ structuredContent: { text: "as a task" } });

    const failing = await startTask(client, "fail", {});
    const result = await within(client.experimental.tasks.getTaskResult(failing, CallToolResultSchema), "tasks/result");
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain("tool_error");
    expect((await client.experimental.tasks.getTask(failing)).status).toBe("failed");
  });
});

describe("durable tasks", () => {
  it("a task created on a server that is then SIGKILLed is still there, and its result arrives", async () => {
    const first = await mcpClient(b.url);
    const taskId = await startTask(first, "slow", { id: "across-the-kill" });
    await within(hook(invoked, "across-the-kill").promise, "the host to receive the call", 30_000);
    expect((await first.experimental.tasks.getTask(taskId)).status).toBe("working");

    // A second application process whose host connection is on B: its call is lost with B.
    const onB = new Brain({ url: b.url, token: appToken });
    brains.push(onB);
    const lostSession = (await onB.sessions.create({ model: scripted(), tools: [hold()] })).id;
    const lostTask = await startTask(await mcpClient(b.url, appToken, "", lostSession), "hold", { id: "lost" });
    await within(hook(invoked, "lost").promise, "the host on B to receive the call", 30_000);

    await b.kill("SIGKILL");

    // The client comes back through the other server: the task is the journal's, not B's.
    const second = await mcpClient(a.url);
    const task = await second.experimental.tasks.getTask(taskId);
    expect(task).toMatchObject({ taskId, status: "working", ttl: 600_000 });
    // tasks/result blocks until the call answers, then returns what the tool produced.
    const pending = second.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    hook(gates, "across-the-kill").resolve();
    const result = await within(pending, "tasks/result after the kill", 30_000);
    expect(result.structuredContent).toEqual({ done: "across-the-kill" });
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId });
    expect((await second.experimental.tasks.getTask(taskId)).status).toBe("completed");
    const { tasks } = await second.experimental.tasks.listTasks();
    expect(tasks.map((t) => t.taskId)).toContain(taskId);

    // The call whose host connection died with B ends `unknown` once B is declared dead (its
    // heartbeat 3 s stale), and its task fails with that; it is never sent again.
    const lostClient = await mcpClient(a.url, appToken, "", lostSession);
    const lostResult = await within(
      lostClient.experimental.tasks.getTaskResult(lostTask, CallToolResultSchema),
      "tasks/result of the lost call",
      45_000,
    );
    expect(lostResult.isError).toBe(true);
    expect(JSON.stringify(lostResult.content)).toContain("server_lost");
    const lost = await lostClient.experimental.tasks.getTask(lostTask);
    expect(lost.status).toBe("failed");
    expect(lost.statusMessage).toContain("unknown");
  }, 90_000);

  it("tasks/cancel is Brain's call cancel: the host sees it, and the task stays cancelled", async () => {
    const client = await mcpClient(a.url);
    const taskId = await startTask(client, "hold", { id: "cancel-me" });
    const seq = await within(hook(invoked, "cancel-me").promise, "the host to receive the call", 30_000);
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    const reason = await within(hook(aborted, "cancel-me").promise, "the host's signal to abort");
    expect(JSON.stringify(reason)).toContain("cancelled");
    const [ended] = await db.sql<{ payload: unknown }[]>`
      SELECT payload FROM brain.records
      WHERE session_id = ${sessionId} AND kind = 'tool_call_ended' AND (payload->>'call')::bigint = ${seq}`;
    expect(ended?.payload).toEqual({ call: seq, outcome: { status: "cancelled", cause: "mcp_cancel" } });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(true);
    // A terminal task cannot be cancelled again (-32602), and keeps its status.
    expect((await rpcError(client.experimental.tasks.cancelTask(taskId))).code).toBe(-32602);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
  });
});

describe("Brain's rules apply to MCP calls", () => {
  it("a task's call keeps its deadline: the tool's timeoutMs ends it `timeout` and the host's signal fires", async () => {
    const client = await mcpClient(a.url);
    const taskId = await startTask(client, "brief", { id: "deadline" });
    const result = await within(
      client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema),
      "the deadline to end the call",
      30_000,
    );
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: "text", text: '{"status":"timeout","cause":"deadline"}' }]);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe("failed");
    const reason = await within(hook(aborted, "deadline").promise, "the host's signal to abort");
    expect(JSON.stringify(reason)).toContain("timeout");
    const { sequence } = (result._meta as Record<string, { sequence: number }>)["com.aexhq.brain/call"]!;
    const [row] = await db.sql<{ deadline_at: Date | null; outcome: unknown }[]>`
      SELECT deadline_at, outcome FROM brain.tool_calls WHERE session_id = ${sessionId} AND seq = ${sequence}`;
    expect(row?.deadline_at).not.toBeNull();
    expect(row?.outcome).toEqual({ status: "timeout", cause: "deadline" });
  }, 60_000);
});

describe("tasks belong to their principal", () => {
  it("another principal is told a task does not exist, and lists none", async () => {
    const owner = await mcpClient(a.url);
    const taskId = await startTask(owner, "echo", { text: "mine" });
    expect((await owner.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);

    // The operator may use every session, but not another principal's tasks.
    const operator = await mcpClient(a.url, operatorToken);
    const notFound = await rpcError(operator.experimental.tasks.getTask(taskId));
    expect(notFound.code).toBe(-32602);
    expect((await rpcError(operator.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).code).toBe(-32602);
    expect((await rpcError(operator.experimental.tasks.cancelTask(taskId))).code).toBe(-32602);
    expect((await operator.experimental.tasks.listTasks()).tasks).toEqual([]);

    // Another application does not even find the session.
    const stranger = new Client({ name: "stranger", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(endpoint(a.url), {
      requestInit: { headers: { authorization: `Bearer ${otherAppToken}` } },
    });
    await expect(stranger.connect(transport)).rejects.toMatchObject({ code: 404 });
  });
});

describe("hostile input", () => {
  const post = async (raw: string, headers: Record<string, string> = {}, path = `/v1/sessions/${sessionId}/mcp`) => {
    const res = await fetch(`${a.url}${path}`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${appToken}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...headers,
      },
      body: raw,
    });
    const text = await res.text();
    // A notification alone is answered 202 with no body.
    const json = (text === "" ? {} : JSON.parse(text)) as { error?: { code?: number; data?: { code?: string } } };
    return { status: res.status, text, json };
  };
  const call = (params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params });
  const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

  it("answers JSON-RPC errors, never a 500, and writes nothing", async () => {
    const count = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.records`)[0]!.n;
    const before = await count();
    const cases: [string, Awaited<ReturnType<typeof post>>, number, number][] = [
      ["not JSON", await post("{not json"), 400, -32700],
      ["a batch", await post("[]"), 400, -32600],
      ["not JSON-RPC", await post('{"hello":1}'), 400, -32600],
      [
        "tasks/get without a taskId",
        await post('{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{}}'),
        200,
        -32602,
      ],
      [
        "tasks/get of a malformed id",
        await post('{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"../../etc"}}'),
        200,
        -32602,
      ],
      ["an unknown method", await post('{"jsonrpc":"2.0","id":1,"method":"files/delete"}'), 200, -32601],
      ["an unknown tool", await post(call({ name: "rm", arguments: {} })), 200, -32602],
      ["arguments not an object", await post(call({ name: "echo", arguments: [1] })), 200, -32602],
      [
        "arguments nested too deep",
        await post(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":${deep(5000)}}}`),
        200,
        -32602,
      ],
      ["a NUL character", await post(call({ name: "echo", arguments: { text: "a\u0000b" } })), 200, -32602],
      [
        "a bad cursor",
        await post('{"jsonrpc":"2.0","id":1,"method":"tasks/list","params":{"cursor":"x"}}'),
        200,
        -32602,
      ],
      ["an unknown query", await post("{}", {}, `/v1/sessions/${sessionId}/mcp?admin=1`), 400, -32600],
      ["text/plain", await post("hi", { "content-type": "text/plain" }), 415, -32600],
      ["no bearer token", await post("{}", { authorization: "" }), 401, -32600],
      ["an unknown session", await post("{}", {}, `/v1/sessions/${crypto.randomUUID()}/mcp`), 404, -32600],
      ["a body over 1 MiB", await post(JSON.stringify({ pad: "x".repeat(1_100_000) })), 413, -32600],
    ];
    const wrong = cases
      .filter(([, answer, status, code]) => answer.status !== status || answer.json.error?.code !== code)
      .map(([what, answer]) => `${what}: ${answer.status} ${answer.text.slice(0, 200)}`);
    expect(wrong).toEqual([]);
    expect(await count()).toBe(before);

    for (const method of ["GET", "DELETE"]) {
      const res = await fetch(endpoint(a.url), { method, headers: { authorization: `Bearer ${appToken}` } });
      expect(res.status, method).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
    }
  });

  it("any JSON, and any params of the methods Brain answers, get a JSON-RPC answer below 500 and write nothing", async () => {
    const count = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM brain.records`)[0]!.n;
    const before = await count();
    const methods = ["initialize", "tools/list", "tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "ping"];
    const message = fc.oneof(
      fc.jsonValue(),
      fc.record({
        jsonrpc: fc.constant("2.0"),
        id: fc.oneof(fc.integer(), fc.string()),
        method: fc.constantFrom(...methods),
        params: fc.jsonValue(),
      }),
      // tools/call of tools the session does not have, so nothing may start.
      fc.record({
        jsonrpc: fc.constant("2.0"),
        id: fc.integer(),
        method: fc.constant("tools/call"),
        params: fc.record({ name: fc.string(), arguments: fc.jsonValue(), task: fc.jsonValue() }, { requiredKeys: [] }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(message, async (body) => {
        const name = (body as { params?: { name?: unknown } } | null)?.params?.name;
        if (["echo", "slow", "hold", "fail"].includes(name as string)) return;
        const answer = await post(JSON.stringify(body));
        expect(answer.status, answer.text).toBeLessThan(500);
        if (answer.status !== 202) expect(answer.json).toMatchObject({ jsonrpc: "2.0" });
      }),
      { numRuns: 150 },
    );
    expect(await count()).toBe(before);
  }, 120_000);
});

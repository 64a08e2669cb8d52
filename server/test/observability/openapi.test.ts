// GET /openapi.json: the API description generated from the zod contracts. Every route the server
// registers is described (and nothing else is), every route lists the error codes it can answer,
// and real answers of a running server (successes and errors) validate against the document.
import { createHash } from "node:crypto";
import { ERROR_CODES, type ErrorCode } from "@aexhq/brain-contracts";
import { errorsByStatus, HTTP_ROUTES, openApiPath } from "@aexhq/brain-contracts/openapi";
import { accessOf } from "@aexhq/brain-server";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";

const server = startedBeforeAll(() => startBrain());

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
  parameters?: { in: string; name: string }[];
  security?: unknown[];
}
type Document = { openapi: string; paths: Record<string, Record<string, Operation>> };

/** The route's entry: its own, or the GET's for a HEAD route Fastify derived. */
function describedAs(key: string): string | undefined {
  if (HTTP_ROUTES[key]) return key;
  const [method, path] = key.split(" ");
  return method === "HEAD" && HTTP_ROUTES[`GET ${path}`] ? `GET ${path}` : undefined;
}

async function fetchDocument(): Promise<Document> {
  const res = await fetch(`${server.url}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  return (await res.json()) as Document;
}

describe("the document covers the server", () => {
  it("describes every route the server registered, and no other", async () => {
    const registered = [...new Set(server.app.registeredRoutes)].sort();
    expect(registered.length).toBeGreaterThan(20);
    const undescribed = registered.filter((r) => describedAs(r) === undefined);
    expect(undescribed, "routes without an entry in contracts/src/openapi/routes.ts").toEqual([]);
    const stale = Object.keys(HTTP_ROUTES).filter((r) => !registered.includes(r));
    expect(stale, "entries of routes the server does not register").toEqual([]);

    const doc = await fetchDocument();
    expect(doc.openapi).toBe("3.1.0");
    for (const key of Object.keys(HTTP_ROUTES)) {
      const [method, path] = key.split(" ") as [string, string];
      const op = doc.paths[openApiPath(path)]?.[method.toLowerCase()];
      expect(op, key).toBeDefined();
      // Path parameters are declared, one for each `:name`.
      const names = [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
      expect(
        op!.parameters
          ?.filter((p) => p.in === "path")
          .map((p) => p.name)
          .sort() ?? [],
        key,
      ).toEqual(names.sort());
    }
  });

  it("states each route's credential as the server's access rules have it", () => {
    for (const [key, route] of Object.entries(HTTP_ROUTES)) {
      const [method, path] = key.split(" ") as [string, string];
      const access = accessOf(method, path);
      if (route.auth === "operator") expect(access, key).toBe("operator");
      else if (route.auth === "token") expect(["any", "session"], key).toContain(access);
      else expect(access, key).toBeUndefined();
    }
  });

  it("lists, per route, each error code it can answer at the code's status", async () => {
    const doc = await fetchDocument();
    for (const [key, route] of Object.entries(HTTP_ROUTES)) {
      const [method, path] = key.split(" ") as [string, string];
      const op = doc.paths[openApiPath(path)]![method.toLowerCase()]!;
      expect(route.errors.length, key).toBeGreaterThan(0);
      for (const [status, codes] of errorsByStatus(route)) {
        type Code = { enum: string[] };
        const schema = op.responses[String(status)]?.content?.["application/json"]?.schema as {
          properties: { error: { properties: { code: Code; data?: { properties: { code: Code } } } } };
        };
        expect(schema, `${key} ${status}`).toBeDefined();
        // The MCP endpoint's refusals are JSON-RPC errors carrying Brain's code as error.data.code.
        const error = schema.properties.error.properties;
        const listed = route.errorBody === "jsonrpc" ? error.data!.properties.code : error.code;
        expect(listed.enum.sort()).toEqual([...codes].sort());
        for (const code of codes) {
          // Only API codes cross the wire as errors; outcome codes only where a route relays them.
          const known = ERROR_CODES[code];
          expect(known.scope === "api" || status !== 200, `${key}: ${code}`).toBe(true);
        }
      }
    }
    // Every authenticated route answers unauthorized; every /v1 route database_unavailable.
    for (const [key, route] of Object.entries(HTTP_ROUTES)) {
      const codes = route.errors.map((e) => (typeof e === "string" ? e : e[0]));
      if (route.auth !== "none") expect(codes, key).toContain("unauthorized");
      if (key.split(" ")[1]!.startsWith("/v1/")) expect(codes, key).toContain("database_unavailable");
      if (route.auth === "operator") expect(codes, key).toContain("forbidden");
    }
  });

  it("describes the WebSocket upgrades as such, with the frames of each side", async () => {
    const doc = await fetchDocument();
    for (const path of ["/v1/hosts/{id}/connect", "/v1/replicas/{id}/connect"]) {
      const op = doc.paths[path]!.get! as Operation & { "x-websocket"?: { client: unknown; server: unknown } };
      expect(op.responses["101"]).toBeDefined();
      expect(op["x-websocket"]?.client).toMatchObject({ oneOf: expect.any(Array) });
      expect(op["x-websocket"]?.server).toMatchObject({ oneOf: expect.any(Array) });
    }
  });
});

describe("real answers validate against the document", () => {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  let loaded = false;
  const exercised = new Set<string>();

  /** Checks one answer of `route` against the document: its status is listed, its body fits. */
  async function check(route: string, res: Response): Promise<unknown> {
    if (!loaded) {
      ajv.addSchema(await fetchDocument(), "openapi");
      loaded = true;
    }
    const [method, path] = route.split(" ") as [string, string];
    const key = describedAs(route)!;
    const op = (await fetchDocument()).paths[openApiPath(path)]![key.split(" ")[0]!.toLowerCase()]!;
    const status = String(res.status);
    const response = op.responses[status];
    const text = await res.text();
    expect(response, `${route} answered ${status}: ${text}`).toBeDefined();
    exercised.add(`${key} ${status}`);
    if (method === "HEAD" || !response!.content) {
      expect(text, `${route} ${status} has no body`).toBe("");
      return undefined;
    }
    const [type] = Object.keys(response!.content);
    expect(res.headers.get("content-type") ?? "").toContain(type!);
    const pointer = [
      "paths",
      openApiPath(path),
      key.split(" ")[0]!.toLowerCase(),
      "responses",
      status,
      "content",
      type!,
      "schema",
    ]
      .map((s) => encodeURIComponent(s.replace(/~/g, "~0").replace(/\//g, "~1")))
      .join("/");
    const validate = ajv.getSchema(`openapi#/${pointer}`)!;
    expect(validate, pointer).toBeDefined();
    const bodies =
      type === "application/x-ndjson"
        ? text
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : type === "text/plain"
          ? [text]
          : [JSON.parse(text)];
    for (const body of bodies) {
      expect(validate(body), `${route} ${status}: ${JSON.stringify(validate.errors)} in ${text.slice(0, 500)}`).toBe(
        true,
      );
    }
    return type === "application/x-ndjson" || type === "text/plain" ? bodies : bodies[0];
  }

  const send = (
    method: string,
    path: string,
    options: {
      token?: string | null;
      body?: unknown;
      headers?: Record<string, string>;
      raw?: Uint8Array;
      type?: string;
    } = {},
  ) => {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? server.token : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | Uint8Array | undefined;
    if (options.raw) {
      body = options.raw;
      headers["content-type"] = options.type ?? "application/octet-stream";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = "application/json";
    }
    return fetch(`${server.url}${path}`, { method, headers, body });
  };

  it("successes and errors of every kind of route", async () => {
    await check("GET /healthz", await send("GET", "/healthz", { token: null }));
    await check("GET /readyz", await send("GET", "/readyz", { token: null }));
    await check("GET /openapi.json", await send("GET", "/openapi.json", { token: null }));
    await check("HEAD /openapi.json", await send("HEAD", "/openapi.json", { token: null }));
    await check("GET /metrics", await send("GET", "/metrics"));
    await check("GET /metrics", await send("GET", "/metrics", { token: null }));

    // Tokens: created, listed, revoked; refused to an application; malformed.
    const created = (await check("POST /v1/tokens", await send("POST", "/v1/tokens", { body: { name: "app" } }))) as {
      id: string;
      token: string;
    };
    await check("POST /v1/tokens", await send("POST", "/v1/tokens", { body: { name: "" } }));
    await check("POST /v1/tokens", await send("POST", "/v1/tokens", { token: created.token, body: { name: "x" } }));
    await check("GET /v1/tokens", await send("GET", "/v1/tokens"));
    await check("GET /metrics", await send("GET", "/metrics", { token: created.token }));

    // Hosts and named host replicas.
    const host = (await check("POST /v1/hosts", await send("POST", "/v1/hosts", { body: { name: "h" } }))) as {
      id: string;
      token: string;
    };
    const placement = (name: string, env: string) => ({
      name,
      description: "A tool.",
      inputSchema: { type: "object" },
      outputSchema: null,
      env: { type: "host", name: env },
    });
    const replica = (await check(
      "POST /v1/named-hosts/:name/replicas",
      await send("POST", "/v1/named-hosts/workers/replicas", { body: { tools: [placement("t", "workers")] } }),
    )) as { replicaId: string };
    await check(
      "POST /v1/named-hosts/:name/replicas",
      await send("POST", "/v1/named-hosts/workers/replicas", { body: { tools: [placement("t", "elsewhere")] } }),
    );

    // The host socket: refused without its token, opened (101) with it.
    await check("GET /v1/hosts/:id/connect", await send("GET", `/v1/hosts/${host.id}/connect`, { token: null }));
    await check(
      "GET /v1/replicas/:id/connect",
      await send("GET", `/v1/replicas/${replica.replicaId}/connect`, { token: "nope" }),
    );
    const upgraded = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${server.url.replace("http", "ws")}/v1/hosts/${host.id}/connect`, {
        headers: { authorization: `Bearer ${host.token}` },
      });
      ws.once("upgrade", (res) => resolve(res.statusCode ?? 0));
      ws.once("open", () => ws.close());
      ws.once("error", reject);
    });
    expect(Object.keys((await fetchDocument()).paths["/v1/hosts/{id}/connect"]!.get!.responses)).toContain(
      String(upgraded),
    );

    // Sessions: created (idempotently), listed, read, messaged, streamed, cancelled, ended, deleted.
    const body = { model: { provider: "scripted", script: [{ text: "hello" }] } };
    const key = { "idempotency-key": "k-1" };
    const session = (await check("POST /v1/sessions", await send("POST", "/v1/sessions", { body, headers: key }))) as {
      id: string;
    };
    await check("POST /v1/sessions", await send("POST", "/v1/sessions", { body, headers: key }));
    await check(
      "POST /v1/sessions",
      await send("POST", "/v1/sessions", { body: { ...body, metadata: { a: "b" } }, headers: key }),
    );
    await check("POST /v1/sessions", await send("POST", "/v1/sessions", { body: { model: { provider: "nope" } } }));
    await check(
      "POST /v1/sessions",
      await send("POST", "/v1/sessions", { raw: new Uint8Array([1]), type: "text/plain" }),
    );
    await check("POST /v1/sessions", await send("POST", "/v1/sessions", { body, token: null }));
    await check("GET /v1/sessions", await send("GET", "/v1/sessions?limit=2"));
    await check("GET /v1/sessions", await send("GET", "/v1/sessions?cursor=bad"));
    await check("GET /v1/sessions/:id", await send("GET", `/v1/sessions/${session.id}`));
    await check("GET /v1/sessions/:id", await send("GET", "/v1/sessions/not-a-uuid"));
    await check("GET /v1/sessions/:id", await send("GET", `/v1/sessions/${crypto.randomUUID()}`));
    await check("GET /v1/sessions/:id", await send("GET", `/v1/sessions/${session.id}`, { token: created.token }));
    await check("HEAD /v1/sessions/:id", await send("HEAD", `/v1/sessions/${session.id}`));
    await check("GET /v1/sessions/:id/tools", await send("GET", `/v1/sessions/${session.id}/tools`));
    // The MCP endpoint: JSON-RPC answers, and refusals as JSON-RPC errors carrying Brain's code.
    const mcp = `/v1/sessions/${session.id}/mcp`;
    const accept = { accept: "application/json, text/event-stream" };
    const rpc = (method: string, params: Record<string, unknown> = {}) => ({ jsonrpc: "2.0", id: 1, method, params });
    await check("POST /v1/sessions/:id/mcp", await send("POST", mcp, { body: rpc("tools/list"), headers: accept }));
    await check("POST /v1/sessions/:id/mcp", await send("POST", mcp, { body: rpc("tools/list"), token: null }));
    await check(
      "POST /v1/sessions/:id/mcp",
      await send("POST", `/v1/sessions/${crypto.randomUUID()}/mcp`, { body: rpc("ping"), headers: accept }),
    );
    await check("GET /v1/sessions/:id/mcp", await send("GET", mcp));
    await check("DELETE /v1/sessions/:id/mcp", await send("DELETE", mcp));
    const posted = (await check(
      "POST /v1/sessions/:id/messages",
      await send("POST", `/v1/sessions/${session.id}/messages`, { body: { text: "hi", wait: true } }),
    )) as { activation: { text: string } };
    expect(posted.activation.text).toBe("hello");
    await check(
      "POST /v1/sessions/:id/messages",
      await send("POST", `/v1/sessions/${session.id}/messages`, { body: { text: "" } }),
    );
    const events = (await check(
      "GET /v1/sessions/:id/events",
      await send("GET", `/v1/sessions/${session.id}/events?after=0`),
    )) as unknown[];
    expect(events.length).toBeGreaterThan(3);
    await check("GET /v1/sessions/:id/events", await send("GET", `/v1/sessions/${session.id}/events?after=-1`));
    await check("POST /v1/sessions/:id/cancel", await send("POST", `/v1/sessions/${session.id}/cancel`));
    await check(
      "POST /v1/sessions/:id/calls/:seq/cancel",
      await send("POST", `/v1/sessions/${session.id}/calls/999/cancel`),
    );
    await check("POST /v1/sessions/:id/end", await send("POST", `/v1/sessions/${session.id}/end`));
    await check(
      "POST /v1/sessions/:id/messages",
      await send("POST", `/v1/sessions/${session.id}/messages`, { body: { text: "again" } }),
    );
    await check("POST /v1/sessions/:id/cancel", await send("POST", `/v1/sessions/${session.id}/cancel`));
    await check("DELETE /v1/sessions/:id", await send("DELETE", `/v1/sessions/${session.id}`));
    await check("DELETE /v1/sessions/:id", await send("DELETE", `/v1/sessions/${session.id}`));

    // Components: absent, and an upload that is not a component.
    const junk = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0]);
    const sha = createHash("sha256").update(junk).digest("hex");
    await check("HEAD /v1/components/:sha256", await send("HEAD", `/v1/components/${sha}`));
    await check(
      "PUT /v1/components/:sha256",
      await send("PUT", `/v1/components/${sha}`, { raw: junk, type: "application/wasm" }),
    );
    await check("PUT /v1/components/:sha256", await send("PUT", `/v1/components/${sha}`, { body: {} }));

    // Call callbacks, without a call's token.
    const call = `/v1/calls/${crypto.randomUUID()}/1`;
    await check(
      "POST /v1/calls/:sessionId/:sequence/frames",
      await send("POST", `${call}/frames`, { body: { type: "finish" } }),
    );
    await check("POST /v1/calls/:sessionId/:sequence/model", await send("POST", `${call}/model`, { body: {} }));

    await check("DELETE /v1/tokens/:id", await send("DELETE", `/v1/tokens/${created.id}`));
    await check("DELETE /v1/tokens/:id", await send("DELETE", `/v1/tokens/${crypto.randomUUID()}`));

    // What was answered covers successes and errors of many kinds.
    const statuses = new Set([...exercised].map((e) => e.split(" ").at(-1)));
    for (const s of ["200", "201", "204", "400", "401", "403", "404", "409", "415"]) expect(statuses).toContain(s);
    const errorCodes: ErrorCode[] = ["unauthorized", "forbidden", "idempotency_conflict", "session_ended"];
    expect(errorCodes.every((c) => ERROR_CODES[c].scope === "api")).toBe(true);
  });
});

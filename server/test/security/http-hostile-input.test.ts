import { randomUUID } from "node:crypto";
import { ERROR_CODES, type ErrorCode, isErrorCode, MAX_BODY_BYTES, MAX_MESSAGE_CHARS } from "@aexhq/brain-contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  activationEnded,
  countRows,
  createSession,
  expectError,
  hostTool,
  postMessage,
  type RequestOptions,
  request,
} from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { scripted } from "../../../testkit/turns.js";

let brain: InProcessBrain;
let sessionId: string;
let hostId: string;

const tool = hostTool;

beforeAll(async () => {
  brain = await startBrain();
  hostId = ((await request(brain, "POST", "/v1/hosts", { body: { name: "app" } })).json as { id: string }).id;
  sessionId = (await createSession(brain, { model: scripted("one", "two", "three") })).id;
  await postMessage(brain, sessionId, "warm up", { wait: true });
});
afterAll(async () => {
  await brain?.close();
});

/** Sends a request that must be refused with `code`, and checks that no row was written. */
async function refused(
  method: string,
  path: string,
  options: RequestOptions,
  code: ErrorCode,
): Promise<{ details?: unknown }> {
  const before = await countRows(brain.db.sql);
  const answer = await request(brain, method, path, options);
  const error = expectError(answer, code);
  expect(await countRows(brain.db.sql), `${method} ${path} wrote rows`).toEqual(before);
  return error;
}

const json = (raw: string): RequestOptions => ({ raw, contentType: "application/json" });

describe("hostile input", () => {
  it("malformed JSON → 400 invalid_request", async () => {
    const bodies = ['{"model":', "{", "nul", "[1,2", '{"text": "a",}', "'text'", "{text: 1}", "\u0000", ""];
    for (const raw of bodies) {
      for (const path of ["/v1/sessions", `/v1/sessions/${sessionId}/messages`, "/v1/hosts"]) {
        await refused("POST", path, json(raw), "invalid_request");
      }
    }
  });

  it("wrong types → invalid_request with the failing paths in details", async () => {
    const cases: [string, unknown, string][] = [
      ["/v1/sessions", { model: { provider: "scripted", script: "x" } }, "model.script"],
      ["/v1/sessions", { model: "scripted" }, "model"],
      ["/v1/sessions", { model: { provider: "gemini", script: [] } }, "model.provider"],
      ["/v1/sessions", { model: { provider: "openai", name: "m" } }, "model.apiKey"],
      [
        "/v1/sessions",
        { model: { provider: "openai", name: "m", apiKey: "k", baseUrl: "file:///etc" } },
        "model.baseUrl",
      ],
      [
        "/v1/sessions",
        { model: scripted(), environments: [{ type: "http", name: "e", baseUrl: "ftp://x" }] },
        "environments.0.baseUrl",
      ],
      [
        "/v1/sessions",
        { model: scripted(), environmentControl: { operations: ["destroy"] } },
        "environmentControl.operations.0",
      ],
      ["/v1/sessions", { model: scripted(), metadata: { a: 1 } }, "metadata.a"],
      ["/v1/sessions", { model: scripted(), tools: "all" }, "tools"],
      ["/v1/sessions", { model: scripted(), hostId: "not-a-uuid" }, "hostId"],
      [
        "/v1/sessions",
        { model: scripted(), hostId, tools: [{ ...tool("x"), env: { type: "worker" } }] },
        "tools.0.env.type",
      ],
      ["/v1/sessions", { model: scripted(), hostId, tools: [tool("has space")] }, "tools.0.name"],
      ["/v1/sessions", [], ""],
      ["/v1/sessions", null, ""],
      [`/v1/sessions/${sessionId}/messages`, { text: 5 }, "text"],
      [`/v1/sessions/${sessionId}/messages`, { text: "" }, "text"],
      [`/v1/sessions/${sessionId}/messages`, { text: "a", wait: "yes" }, "wait"],
      [`/v1/sessions/${sessionId}/messages`, {}, "text"],
      [`/v1/sessions/${sessionId}/messages`, "hello", ""],
      [`/v1/sessions/${sessionId}/messages`, 42, ""],
      ["/v1/hosts", { name: 5 }, "name"],
      ["/v1/hosts", { name: "" }, "name"],
    ];
    for (const [path, body, failing] of cases) {
      const error = await refused("POST", path, { body }, "invalid_request");
      const details = error.details as { path: string; code: string; message: string }[];
      expect(Array.isArray(details), JSON.stringify(body)).toBe(true);
      expect(details.map((d) => d.path)).toContain(failing);
      for (const d of details) expect(typeof d.message).toBe("string");
    }
  });

  it("unknown fields (strict objects) → invalid_request, unrecognized_keys in details", async () => {
    const cases: [string, unknown][] = [
      ["/v1/sessions", { model: scripted(), owner: "me" }],
      ["/v1/sessions", { model: { ...scripted(), temperature: 1 } }],
      ["/v1/sessions", { model: { provider: "scripted", script: [{ text: "x", extra: true }] } }],
      ["/v1/sessions", { model: scripted(), hostId, tools: [{ ...tool("t"), run: "rm -rf /" }] }],
      [`/v1/sessions/${sessionId}/messages`, { text: "hi", role: "system" }],
      ["/v1/hosts", { name: "h", admin: true }],
    ];
    for (const [path, body] of cases) {
      const error = await refused("POST", path, { body }, "invalid_request");
      expect((error.details as { code: string }[]).map((d) => d.code)).toContain("unrecognized_keys");
    }
  });

  it("a body that is not application/json → 415 unsupported_media_type", async () => {
    const types: [string, string][] = [
      ["text/plain", '{"text":"hi"}'],
      ["text/plain; charset=utf-8", "hi"],
      ["application/x-www-form-urlencoded", "text=hi"],
      ["application/xml", "<text>hi</text>"],
      ["multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="text"\r\n\r\nhi\r\n--x--'],
      ["application/octet-stream", '{"text":"hi"}'],
    ];
    const answers: string[] = [];
    const before = await countRows(brain.db.sql);
    for (const [contentType, raw] of types) {
      for (const path of ["/v1/sessions", `/v1/sessions/${sessionId}/messages`, "/v1/hosts"]) {
        const answer = await request(brain, "POST", path, { raw, contentType });
        const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
        answers.push(`${contentType} ${path} → ${answer.status} ${code}`);
      }
    }
    expect(await countRows(brain.db.sql)).toEqual(before);
    expect(answers).toEqual(answers.map((a) => a.replace(/→ .*$/, "→ 415 unsupported_media_type")));
  });

  it("a body over 1 MiB → 413 body_too_large, with or without Content-Length", async () => {
    const big = JSON.stringify({ text: "a".repeat(MAX_BODY_BYTES) });
    await refused("POST", `/v1/sessions/${sessionId}/messages`, json(big), "body_too_large");
    await refused("POST", "/v1/sessions", json(big), "body_too_large");
    // Chunked: the server only finds out while reading.
    const before = await countRows(brain.db.sql);
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        const piece = new TextEncoder().encode("a".repeat(64 * 1024));
        controller.enqueue(new TextEncoder().encode('{"text":"'));
        for (let i = 0; i < 20; i++) controller.enqueue(piece);
        controller.enqueue(new TextEncoder().encode('"}'));
        controller.close();
      },
    });
    const res = await fetch(`${brain.url}/v1/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
      body: chunks,
      duplex: "half",
    } as RequestInit);
    const text = await res.text();
    expectError({ status: res.status, headers: res.headers, text, json: JSON.parse(text) }, "body_too_large");
    expect(await countRows(brain.db.sql)).toEqual(before);
  });

  it("bad UUIDs in paths → invalid_request", async () => {
    const ids = ["not-a-uuid", "1", "00000000-0000-0000-0000-00000000000g", "%27%20OR%201%3D1%20--", "..%2F..%2Fetc"];
    for (const id of ids) {
      await refused("GET", `/v1/sessions/${id}`, {}, "invalid_request");
      await refused("DELETE", `/v1/sessions/${id}`, {}, "invalid_request");
      await refused("POST", `/v1/sessions/${id}/end`, {}, "invalid_request");
      await refused("POST", `/v1/sessions/${id}/messages`, { body: { text: "hi" } }, "invalid_request");
      await refused("GET", `/v1/sessions/${id}/events`, {}, "invalid_request");
    }
  });

  it("a bad cursor or limit → invalid_request", async () => {
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const queries = [
      "cursor=!!!",
      `cursor=${Buffer.from("not json").toString("base64url")}`,
      `cursor=${b64({ createdAt: "yesterday", id: randomUUID() })}`,
      `cursor=${b64({ createdAt: new Date().toISOString(), id: "'; DROP TABLE sessions; --" })}`,
      `cursor=${b64({ createdAt: new Date().toISOString() })}`,
      `cursor=${b64([1, 2])}`,
      `cursor=${"a".repeat(201)}`,
      "limit=0",
      "limit=201",
      "limit=abc",
      "limit=1.5",
      "limit=1&limit=2",
      "offset=10",
    ];
    for (const q of queries) await refused("GET", `/v1/sessions?${q}`, {}, "invalid_request");
  });

  it("a bad after or follow → invalid_request", async () => {
    const queries = ["after=-1", "after=abc", "after=1.5", "follow=yes", "follow=TRUE", "after=1&after=2", "from=3"];
    for (const q of queries) {
      const answer = await request(brain, "GET", `/v1/sessions/${sessionId}/events?${q}`);
      expectError(answer, "invalid_request");
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
    }
  });

  it("duplicate tool names, tools without a host, and an unknown host are refused", async () => {
    await refused(
      "POST",
      "/v1/sessions",
      { body: { model: scripted(), hostId, tools: [tool("lookup"), tool("lookup")] } },
      "duplicate_tool",
    );
    await refused("POST", "/v1/sessions", { body: { model: scripted(), tools: [tool("lookup")] } }, "host_required");
    await refused(
      "POST",
      "/v1/sessions",
      { body: { model: scripted(), hostId: randomUUID(), tools: [tool("lookup")] } },
      "invalid_request",
    );
    await refused("POST", "/v1/sessions", { body: { model: scripted(), hostId: randomUUID() } }, "invalid_request");
  });

  it("an oversized message, metadata value or Idempotency-Key → invalid_request", async () => {
    const path = `/v1/sessions/${sessionId}/messages`;
    await refused("POST", path, { body: { text: "a".repeat(MAX_MESSAGE_CHARS + 1) } }, "invalid_request");
    await refused("POST", path, { body: { text: "é".repeat(MAX_MESSAGE_CHARS + 1) } }, "invalid_request");
    await refused(
      "POST",
      "/v1/sessions",
      { body: { model: scripted(), metadata: { k: "v".repeat(1025) } } },
      "invalid_request",
    );
    await refused(
      "POST",
      path,
      { body: { text: "hi" }, headers: { "idempotency-key": "k".repeat(257) } },
      "invalid_request",
    );
    await refused(
      "POST",
      "/v1/sessions",
      { body: { model: scripted() }, headers: { "idempotency-key": "k".repeat(257) } },
      "invalid_request",
    );
  });

  it("text Postgres cannot store (NUL, lone surrogates) → 2xx or a documented 4xx, never a 500", async () => {
    const strings = ["\u0000", "a\u0000b", "\ud800", "x\udfffy"];
    const failures: string[] = [];
    for (const bad of strings) {
      const cases: [string, unknown][] = [
        ["/v1/hosts", { name: bad }],
        [`/v1/sessions/${sessionId}/messages`, { text: bad }],
        ["/v1/sessions", { model: scripted(), metadata: { key: bad } }],
        ["/v1/sessions", { model: scripted(), metadata: { [bad]: "value" } }],
        ["/v1/sessions", { model: scripted(bad) }],
        ["/v1/sessions", { model: { provider: "scripted", script: [{ toolCalls: [{ name: "t", input: bad }] }] } }],
      ];
      for (const [path, body] of cases) {
        const before = await countRows(brain.db.sql);
        const answer = await request(brain, "POST", path, { body });
        const sent = answer.json as { sequence?: number; error?: { code?: string } } | undefined;
        if (answer.status < 300) {
          if (typeof sent?.sequence === "number") await activationEnded(brain.db.sql, sessionId, sent.sequence);
          continue;
        }
        const code = sent?.error?.code;
        const documented = isErrorCode(code) && ERROR_CODES[code].http === answer.status && answer.status < 500;
        const wrote = JSON.stringify(await countRows(brain.db.sql)) !== JSON.stringify(before);
        if (!documented || wrote) {
          failures.push(`${path.replace(sessionId, ":id")} ${JSON.stringify(body)} → ${answer.status} ${code}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it("prototype-pollution keys → invalid_request, and no prototype is polluted", async () => {
    const bodies: [string, string][] = [
      [`/v1/sessions/${sessionId}/messages`, '{"text":"hi","__proto__":{"polluted":"yes"}}'],
      [`/v1/sessions/${sessionId}/messages`, '{"text":"hi","constructor":{"prototype":{"polluted":"yes"}}}'],
      ["/v1/sessions", '{"model":{"provider":"scripted","script":[]},"metadata":{"__proto__":{"polluted":"yes"}}}'],
      ["/v1/sessions", '{"model":{"provider":"scripted","script":[],"__proto__":{"polluted":"yes"}}}'],
      ["/v1/hosts", '{"__proto__":{"polluted":"yes"}}'],
    ];
    for (const [path, raw] of bodies) await refused("POST", path, json(raw), "invalid_request");
    // The server runs in this process: its objects share our Object.prototype.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("deeply nested JSON → 2xx or a documented 4xx, never a 500", async () => {
    const failures: string[] = [];
    for (const depth of [1_000, 10_000, 100_000]) {
      const deep = "[".repeat(depth) + "]".repeat(depth);
      const cases: [string, string][] = [
        ["/v1/sessions", `{"model":{"provider":"scripted","script":[{"toolCalls":[{"name":"t","input":${deep}}]}]}}`],
        ["/v1/sessions", `{"model":{"provider":"scripted","script":[]},"metadata":${deep}}`],
        [`/v1/sessions/${sessionId}/messages`, `{"text":${deep}}`],
        ["/v1/hosts", deep],
      ];
      for (const [path, raw] of cases) {
        const before = await countRows(brain.db.sql);
        const answer = await request(brain, "POST", path, json(raw));
        const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
        if (answer.status < 300) continue;
        const documented = isErrorCode(code) && ERROR_CODES[code].http === answer.status && answer.status < 500;
        const wrote = JSON.stringify(await countRows(brain.db.sql)) !== JSON.stringify(before);
        if (!documented || wrote)
          failures.push(`depth ${depth} ${path.replace(sessionId, ":id")} → ${answer.status} ${code}`);
      }
    }
    expect(failures).toEqual([]);
    expect((await request(brain, "GET", "/healthz", { token: null })).status).toBe(200);
  });
});

// toolHandler on its own: what it answers to requests that are not invocations (hostile input,
// unknown tools) and to invocations that must run nothing, against a real node:http server. The
// callback receiver is a local server speaking Brain's callback wire format; the invocations are
// signed as Brain signs them, with keys the handler is given.
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InvocationSigner, SecretBox } from "@aexhq/brain-db/secrets";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BrainError, ERROR_CODES, fastifyTools, httpTool, tool, toolHandler } from "../src/index.js";

const servers: Server[] = [];
async function serve(listener: RequestListener): Promise<string> {
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let runs = 0;
const echo = tool({
  name: "echo",
  description: "Returns its input.",
  input: z.object({ text: z.string() }),
  run: async ({ text }) => {
    runs++;
    return { text };
  },
});

const big = tool({
  name: "big",
  description: "Returns more than one WebSocket frame may hold.",
  input: z.object({}),
  run: async () => "x".repeat(70_000),
});

/** What the callback receiver was sent. */
const frames: { authorization: string | undefined; body: unknown }[] = [];
let app: string;
let callbackUrl: string;

const signer = new InvocationSigner(new SecretBox(Buffer.alloc(32, 1)));

beforeAll(async () => {
  app = await serve(toolHandler([echo(), big()], { maxBodyBytes: 4096, keys: signer.keys() }));
  callbackUrl = await serve((req, res) => {
    let text = "";
    req.on("data", (c) => (text += c));
    req.on("end", () => {
      frames.push({ authorization: req.headers.authorization, body: JSON.parse(text) });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ sequence: 100 + frames.length }));
    });
  });
});
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
});

const invocation = (overrides: Record<string, unknown> = {}) => ({
  protocol: "brain.tool/2",
  tool: "echo",
  sessionId: "00000000-0000-4000-8000-000000000001",
  sequence: 7,
  input: { text: "hi" },
  options: null,
  deadline: null,
  callback: { url: `${callbackUrl}/frames`, token: "t0ken" },
  ...overrides,
});

async function post(body: string | undefined, headers: Record<string, string> = {}, method = "POST") {
  const signature: Record<string, string> = body === undefined ? {} : { "brain-signature": signer.sign(body, app) };
  const res = await fetch(app, { method, headers: { ...signature, ...headers }, body });
  return { status: res.status, json: (await res.json()) as { error?: { code: string; message: string } } };
}

describe("toolHandler: requests that are not invocations", () => {
  it("answers each with a Brain error body and its status, running nothing", async () => {
    const json = { "content-type": "application/json" };
    const cases: [Awaited<ReturnType<typeof post>>, keyof typeof ERROR_CODES][] = [
      [await post(undefined, {}, "GET"), "invalid_request"],
      [await post(JSON.stringify(invocation()), { "content-type": "text/plain" }), "unsupported_media_type"],
      [await post(JSON.stringify(invocation()), {}), "unsupported_media_type"],
      [await post("{not json", json), "invalid_request"],
      [await post("null", json), "invalid_request"],
      [await post(JSON.stringify(invocation({ protocol: "brain.tool/1" })), json), "invalid_request"],
      [await post(JSON.stringify(invocation({ callback: undefined })), json), "invalid_request"],
      [
        await post(JSON.stringify(invocation({ callback: { url: "file:///etc/passwd", token: "t" } })), json),
        "invalid_request",
      ],
      [await post(JSON.stringify(invocation({ sequence: -1 })), json), "invalid_request"],
      [await post(JSON.stringify(invocation({ extra: 1 })), json), "invalid_request"],
      [await post(JSON.stringify(invocation({ deadline: "soon" })), json), "invalid_request"],
      [await post(JSON.stringify(invocation({ input: { text: "x".repeat(5000) } })), json), "body_too_large"],
      [await post(JSON.stringify(invocation({ tool: "missing" })), json), "not_found"],
    ];
    for (const [answer, code] of cases) {
      expect(answer.json.error?.code, JSON.stringify(answer.json)).toBe(code);
      expect(answer.status).toBe(ERROR_CODES[code].http);
    }
    expect(runs).toBe(0);
    expect(frames).toEqual([]);
  });

  it("an invocation whose deadline has passed runs nothing and sends nothing", async () => {
    const answer = await post(JSON.stringify(invocation({ deadline: Date.now() - 1 })), {
      "content-type": "application/json",
    });
    expect(answer).toEqual({ status: 200, json: { finished: false } });
    expect(runs).toBe(0);
    expect(frames).toEqual([]);
  });

  it("a valid invocation runs once and finishes through the callback with its bearer token", async () => {
    const answer = await post(JSON.stringify(invocation()), { "content-type": "application/json" });
    expect(answer).toEqual({ status: 200, json: { finished: true } });
    expect(runs).toBe(1);
    expect(frames).toEqual([
      { authorization: "Bearer t0ken", body: { type: "finish", outcome: { status: "ok", value: { text: "hi" } } } },
    ]);
  });

  it("a result larger than a WebSocket frame is sent whole: only the budget bounds a result", async () => {
    frames.length = 0;
    const answer = await post(JSON.stringify(invocation({ tool: "big", input: {} })), {
      "content-type": "application/json",
    });
    expect(answer).toEqual({ status: 200, json: { finished: true } });
    expect(frames).toHaveLength(1);
    expect(frames[0]?.body).toEqual({ type: "finish", outcome: { status: "ok", value: "x".repeat(70_000) } });
  });
});

describe("declaring what a handler serves", () => {
  it("takes placed run tools with unique names", () => {
    expect(() => toolHandler([echo, echo()] as never)).toThrow(BrainError);
    expect(() => toolHandler([echo(), echo()])).toThrow(/Two tools served here are named "echo"/);
    expect(() => fastifyTools([{ name: "x" }] as never)).toThrow(/placed tools/);
  });

  it("httpTool is a v1 placement sending its JSON Schemas", () => {
    const placed = httpTool({
      name: "weather",
      description: "The weather in a city.",
      input: z.object({ city: z.string() }),
      output: z.object({ celsius: z.number() }),
      url: "https://example.com/weather",
      timeoutMs: 5000,
    });
    expect(placed.placement).toEqual({
      name: "weather",
      description: "The weather in a city.",
      inputSchema: expect.objectContaining({ properties: { city: { type: "string" } } }),
      outputSchema: expect.objectContaining({ properties: { celsius: { type: "number" } } }),
      timeoutMs: 5000,
      env: {
        type: "host",
        name: expect.stringMatching(/^http-[0-9a-f]{16}$/),
        url: "https://example.com/weather",
        protocol: "json",
      },
    });
    expect(() => httpTool({ name: "w", description: "d", input: z.object({}), url: "ftp://x" })).toThrow(BrainError);
  });
});

// Fake model providers: real HTTP servers on 127.0.0.1 speaking OpenAI's Chat Completions or
// Anthropic's Messages wire format, for tests of the real provider clients and of ctx.model through
// a real session, without network.
//
//   const openai = await startFakeOpenAI({ apiKey: "sk-test" });
//   // model config: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url }
//   openai.reply({ text: "hello" }, { toolCalls: [{ name: "search", input: { q: "x" } }] });
//   ... openai.requests[0].body.messages ...
//   await openai.close();
//
// Replies are answered in the order queued; with the queue empty a request is answered with the
// text "ok". Streams are real SSE written in several writes (events split mid-line). With `apiKey`
// set, a request presenting another key gets a 401 whose message quotes the presented key, as a
// careless server might: clients must keep it out of their errors.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { anthropicWire, type FakeAnswer, openAIWire, type Wire } from "./fake-provider-wire.js";

export type { FakeAnswer, FakeToolCall } from "./fake-provider-wire.js";

export interface RecordedRequest {
  method: string;
  /** Path and query as requested, e.g. "/v1/chat/completions". */
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (raw text if it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of the recorded wire body.
  body: any;
  /** Settles when the exchange's connection closes; `completed`: the fake had sent its whole answer. */
  closed: Promise<{ completed: boolean }>;
}

/** An error body: a JSON value, or text sent as is. */
export type FakeBody = string | number | boolean | null | unknown[] | { [key: string]: unknown };

export type FakeReply =
  /** A successful answer (text, tool calls, usage, stop reason), streamed unless `json`. */
  | FakeAnswer
  /** An HTTP error; `body` (or a function of the request) replaces the provider-shaped error body. */
  | {
      kind: "error";
      status: number;
      message?: string;
      body?: FakeBody | ((request: RecordedRequest) => FakeBody);
      /** Extra response headers (`retry-after`, say). */
      headers?: Record<string, string>;
    }
  /** Never answers ("nothing") or stalls after the stream's first event, until the client goes away. */
  | { kind: "hang"; after?: "nothing" | "first-chunk" }
  /** Streams some text, then the provider's error event (an error chunk for OpenAI) and ends. */
  | { kind: "stream-error"; text?: string; error: { type: string; message: string } }
  /** Streams some text, then ends the response cleanly without the stream's terminal events. */
  | { kind: "truncated"; text?: string }
  /** Streams some text, then destroys the connection. */
  | { kind: "reset"; text?: string }
  /** Streams text deltas without end, as fast as the client reads, until it goes away. */
  | { kind: "endless" }
  /** Exactly these chunks (bytes may cut UTF-8 sequences), in separate writes. */
  | { kind: "raw"; status?: number; contentType?: string; chunks: (string | Uint8Array)[]; chunkDelayMs?: number };

export interface FakeProvider {
  /** The base URL to configure as the model's `baseUrl`. */
  url: string;
  /** Every request received, in order (including rejected ones). */
  requests: RecordedRequest[];
  /** Queues replies for the next requests. */
  reply(...replies: FakeReply[]): void;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<RecordedRequest[]>;
  /** Stops the server, cutting open connections. */
  close(): Promise<void>;
}

export interface FakeProviderOptions {
  /** When set, requests must present this key. */
  apiKey?: string;
}

export interface Dialect {
  wire: Wire;
  /** The path (and query) the base URL plus the client's own suffix reaches, or a test of it. */
  route: string | ((url: string) => boolean);
  /** Whether a request asks for a stream; default: its body's `stream: true`. */
  streams?: (body: Record<string, unknown>) => boolean;
  /** A streamed answer's content type; default text/event-stream. */
  streamType?: string;
  /** What `url` ends with. */
  base: string;
  presentedKey(headers: IncomingHttpHeaders): string;
  keyRejection(presented: string): string;
}

/** OpenAI Chat Completions at `${url}/chat/completions`; `url` ends in /v1. */
export function startFakeOpenAI(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  return startFake(
    {
      wire: openAIWire,
      route: "/v1/chat/completions",
      base: "/v1",
      presentedKey: (h) => (h.authorization ?? "").replace(/^Bearer /, ""),
      keyRejection: (presented) => `Incorrect API key provided: ${presented}.`,
    },
    options,
  );
}

/** Anthropic Messages at `${url}/v1/messages`; `url` is the bare origin. */
export function startFakeAnthropic(options: FakeProviderOptions = {}): Promise<FakeProvider> {
  return startFake(
    {
      wire: anthropicWire,
      route: "/v1/messages",
      base: "",
      presentedKey: (h) => String(h["x-api-key"] ?? ""),
      keyRejection: (presented) => `invalid x-api-key: ${presented}`,
    },
    options,
  );
}

export async function startFake(dialect: Dialect, options: FakeProviderOptions): Promise<FakeProvider> {
  const { wire } = dialect;
  const requests: RecordedRequest[] = [];
  const queue: FakeReply[] = [];
  const waiters: { count: number; resolve(requests: RecordedRequest[]): void }[] = [];

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString("utf8");
    let body: unknown = raw;
    try {
      body = JSON.parse(raw);
    } catch {}
    const closed = new Promise<{ completed: boolean }>((resolve) => {
      res.on("close", () => resolve({ completed: res.writableFinished }));
    });
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body,
      closed,
    };
    const index = requests.push(recorded) - 1;
    for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(requests.slice());
    }

    const send = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(typeof value === "string" ? value : JSON.stringify(value));
    };
    const routed = typeof dialect.route === "string" ? req.url === dialect.route : dialect.route(req.url ?? "");
    if (req.method !== "POST" || !routed) {
      return send(404, wire.errorBody(404, `no route for ${req.method} ${req.url}`));
    }
    const presented = dialect.presentedKey(req.headers);
    if (options.apiKey !== undefined && presented !== options.apiKey) {
      return send(401, wire.errorBody(401, dialect.keyRejection(presented)));
    }

    const request = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    const model = typeof request.model === "string" ? request.model : "fake-model";
    const reply = queue.shift() ?? {};
    switch (reply.kind) {
      case "error": {
        const custom = typeof reply.body === "function" ? reply.body(recorded) : reply.body;
        return send(
          reply.status,
          custom ?? wire.errorBody(reply.status, reply.message ?? `fake error ${reply.status}`),
          reply.headers,
        );
      }
      case "hang":
        if (reply.after === "first-chunk") {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(wire.first(model));
        }
        return; // until the client (or close()) ends the connection
      case "stream-error":
        return stream(res, [...wire.partial(reply.text ?? "partial", model), wire.streamError(reply.error)]);
      case "truncated":
        return stream(res, wire.partial(reply.text ?? "partial", model));
      case "reset":
        await stream(res, wire.partial(reply.text ?? "partial", model), { end: false });
        res.socket?.destroy();
        return;
      case "endless": {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const delta = wire.partial("abc".repeat(5000), model).slice(1).join("");
        // Backpressure paces it: each write waits for the socket to drain.
        const more = () => {
          while (!res.destroyed && res.write(delta));
          if (!res.destroyed) res.once("drain", more);
        };
        res.socket?.once("close", () => res.off("drain", more));
        return more();
      }
      case "raw":
        return stream(res, reply.chunks, {
          status: reply.status,
          contentType: reply.contentType,
          delayMs: reply.chunkDelayMs,
          split: false,
        });
      default: {
        const ids = (reply.toolCalls ?? []).map((c, i) => c.id ?? `${wire.idPrefix}_${index}_${i}`);
        const answerModel = reply.model ?? model;
        const streams = dialect.streams ? dialect.streams(request) : request.stream === true;
        if (reply.json || !streams) return send(200, wire.json(reply, ids, answerModel));
        const events = wire.stream(reply, ids, answerModel, request);
        const contentType = dialect.streamType;
        return stream(res, events, { delayMs: reply.chunkDelayMs, hold: reply.hold, contentType });
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}${dialect.base}`,
    requests,
    reply: (...replies) => {
      queue.push(...replies);
    },
    waitForRequests: (count) =>
      requests.length >= count
        ? Promise.resolve(requests.slice())
        : new Promise((resolve) => waiters.push({ count, resolve })),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Writes events as a stream. Each event goes out in two writes split mid-event (at a byte, so a
 * UTF-8 sequence may split too) with a pause between writes, so parsers meet partial lines.
 */
async function stream(
  res: ServerResponse,
  events: (string | Uint8Array)[],
  options: {
    status?: number;
    contentType?: string;
    delayMs?: number;
    split?: boolean;
    end?: boolean;
    hold?: { after: number; until: Promise<unknown> } | undefined;
  } = {},
): Promise<void> {
  res.writeHead(options.status ?? 200, {
    "content-type": options.contentType ?? "text/event-stream",
    "cache-control": "no-cache",
  });
  for (const [i, text] of events.entries()) {
    if (i === options.hold?.after) await options.hold.until;
    const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : Buffer.from(text);
    const parts =
      options.split === false ? [bytes] : [bytes.subarray(0, bytes.length >> 1), bytes.subarray(bytes.length >> 1)];
    for (const part of parts) {
      if (res.destroyed) return;
      res.write(part);
      await pause(options.delayMs);
    }
  }
  if (options.end !== false) res.end();
}

function pause(ms = 0): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

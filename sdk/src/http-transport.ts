import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { Readable } from "node:stream";

/** What the SDK reads of an HTTP answer: a fetch `Response` has all of it. */
export interface HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  /** The body as a stream (event streams); reading it excludes json() and text(). */
  readonly body: ReadableStream<Uint8Array> | null;
  json(): Promise<unknown>;
  text(): Promise<string>;
}

export interface HttpExchange {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** Sends one request; resolves once the answer's headers are in, its body still to read. */
export type Transport = (url: string, exchange: HttpExchange) => Promise<HttpAnswer>;

/** An application's own fetch (BrainOptions.fetch): its Response is an HttpAnswer as it is. */
export function fetchTransport(fetchImpl: typeof fetch): Transport {
  return (url, exchange) => fetchImpl(url, exchange);
}

/**
 * A body that stays silent this long is cut, as fetch's own body timeout would: `send` then
 * resumes from the journal, and no other answer is ever this slow to start or to go on.
 */
const IDLE_MS = 300_000;

/**
 * The default transport: node:http(s) on keep-alive connections. fetch costs a host about a
 * millisecond of CPU per request (the WHATWG machinery around each one), which was most of an
 * application's CPU per turn; this does the same exchange for a fraction. Node's agent honours
 * the server's keep-alive timeout, so an idle connection is dropped before the server drops it.
 */
export function nodeTransport(): Transport {
  const agents = {
    http: new HttpAgent({ keepAlive: true }),
    https: new HttpsAgent({ keepAlive: true }),
  };
  return (url, exchange) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === "https:";
      const send = secure ? httpsRequest : httpRequest;
      const req = send(
        target,
        {
          method: exchange.method,
          headers: exchange.headers,
          agent: secure ? agents.https : agents.http,
          ...(exchange.signal ? { signal: exchange.signal } : {}),
        },
        (res) => resolve(new NodeAnswer(res, exchange.signal)),
      );
      req.setTimeout(IDLE_MS, () => req.destroy(new Error(`no answer for ${IDLE_MS / 1000} s`)));
      // As fetch does: an aborted request rejects with the signal's reason.
      req.on("error", (err) => reject(exchange.signal?.aborted ? exchange.signal.reason : err));
      req.end(exchange.body);
    });
}

class NodeAnswer implements HttpAnswer {
  readonly status: number;
  readonly ok: boolean;
  readonly headers: { get(name: string): string | null };
  #stream: ReadableStream<Uint8Array> | undefined;

  constructor(
    private readonly res: IncomingMessage,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.status = res.statusCode ?? 0;
    this.ok = this.status >= 200 && this.status < 300;
    this.headers = {
      get: (name) => {
        const value = res.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
      },
    };
    // A body broken after the headers rejects whichever read is under way (or the next one).
    res.on("error", () => {});
  }

  get body(): ReadableStream<Uint8Array> | null {
    this.#stream ??= Readable.toWeb(this.res) as ReadableStream<Uint8Array>;
    return this.#stream;
  }

  async text(): Promise<string> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of this.res) chunks.push(chunk as Buffer);
    } catch (err) {
      throw this.signal?.aborted ? this.signal.reason : err;
    }
    // A connection cut mid-body ends the stream early without an error: refuse a partial body.
    if (!this.res.complete) {
      throw this.signal?.aborted ? this.signal.reason : new TypeError("terminated: the answer's body was cut short");
    }
    return Buffer.concat(chunks).toString("utf8");
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }
}

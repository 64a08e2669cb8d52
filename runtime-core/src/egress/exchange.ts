/**
 * One HTTP request to something a tenant named (an HTTP Environment, an HTTP tool), through the
 * egress guard's dispatcher: the one client the server and the worker use for it. Bounded by its
 * `signal` alone (the deadline, the call ending, shutdown): the dispatcher has no header or body
 * timeout of its own, which would cut a long tool call short. Redirects are never followed here
 * (the caller decides whether one may be); at most `maxBytes` of the body are kept and the rest
 * is not read.
 */
import type { IncomingHttpHeaders } from "node:http";
import { type Dispatcher, request } from "undici";

export interface HttpExchange {
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal: AbortSignal;
  /** How much of the body to keep, or a limit per status (a success may keep more than an error). */
  maxBytes: number | ((status: number) => number);
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  /** The body's first `maxBytes` bytes. */
  body: Buffer;
  /** The body was longer than `maxBytes` (the rest was not read). */
  overflow: boolean;
}

/** Rejects on a network failure, an abort (with the signal's reason) or a body cut short. */
export async function exchangeVia(dispatcher: Dispatcher, url: URL, exchange: HttpExchange): Promise<HttpAnswer> {
  const headers: Record<string, string> = { "user-agent": "brain", ...exchange.headers };
  const res = await request(url, {
    dispatcher,
    method: exchange.method as Dispatcher.HttpMethod,
    headers,
    body: exchange.body,
    signal: exchange.signal,
  }).catch((error: unknown) => {
    throw exchange.signal.aborted ? exchange.signal.reason : error;
  });
  const limit = typeof exchange.maxBytes === "number" ? exchange.maxBytes : exchange.maxBytes(res.statusCode);
  const chunks: Buffer[] = [];
  let size = 0;
  let overflow = false;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      const room = limit - size;
      size += chunk.length;
      if (chunk.length <= room) {
        chunks.push(chunk);
        continue;
      }
      chunks.push(chunk.subarray(0, Math.max(room, 0)));
      overflow = true;
      break;
    }
  } catch (error) {
    throw exchange.signal.aborted ? exchange.signal.reason : new Error("the answer was cut short", { cause: error });
  } finally {
    if (overflow) res.body.destroy();
  }
  return { status: res.statusCode, headers: res.headers as IncomingHttpHeaders, body: Buffer.concat(chunks), overflow };
}

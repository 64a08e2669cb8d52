/**
 * One HTTP request to something an application serves (an HTTP Environment, an HTTP tool), the
 * one client the server and the worker use for it. node:http rather than fetch: fetch's own
 * header and body timeouts (300 s) would cut a long tool call short, and a call is bounded by its
 * deadline alone (`signal`: the deadline, the call ending, shutdown). Redirects are never
 * followed here (the caller decides whether one may be); at most `maxBytes` of the body are kept
 * and the rest is not read.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";

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
export function httpExchange(url: URL, exchange: HttpExchange): Promise<HttpAnswer> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const headers: Record<string, string | number> = { "user-agent": "brain", ...exchange.headers };
  if (exchange.body !== undefined) headers["content-length"] = Buffer.byteLength(exchange.body);
  return new Promise((resolve, reject) => {
    const req = send(url, { method: exchange.method, headers, signal: exchange.signal }, (res) => {
      const status = res.statusCode ?? 0;
      const limit = typeof exchange.maxBytes === "number" ? exchange.maxBytes : exchange.maxBytes(status);
      readBounded(res, limit).then(resolve, reject);
    });
    req.on("error", reject);
    req.end(exchange.body);
  });
}

function readBounded(res: IncomingMessage, maxBytes: number): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const answer = (overflow: boolean) =>
      resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), overflow });
    res.on("data", (chunk: Buffer) => {
      const room = maxBytes - size;
      size += chunk.length;
      if (chunk.length <= room) {
        chunks.push(chunk);
        return;
      }
      chunks.push(chunk.subarray(0, Math.max(room, 0)));
      answer(true);
      res.destroy();
    });
    res.on("end", () => answer(false));
    res.on("error", reject);
    res.on("close", () => {
      if (!res.complete) reject(new Error("the answer was cut short"));
    });
  });
}

/**
 * Sends one Environment request and turns its answer into an outcome: a 2xx JSON body is the value
 * (a 2xx text body its text, an empty one null); any other status, a malformed JSON body or a
 * network failure is `http_error` (with the status and at most 2 KB of the body); a body larger
 * than a frame may carry is `result_too_large`. Redirects are followed only inside the base URL, so
 * the Environment's headers never reach another origin.
 */
import { errorOutcome, MAX_FRAME_BYTES, type Outcome, storableText } from "@aexhq/brain-contracts";
import { type HttpCall, withinBase } from "./http-request.js";

/** How much of an error body the outcome keeps. */
export const ERROR_EXCERPT_BYTES = 2048;
const MAX_REDIRECTS = 5;

export interface SendOptions {
  /** Requests may not leave this URL (the Environment's base URL). */
  baseUrl: string;
  signal: AbortSignal;
  /** The largest successful body accepted; default MAX_FRAME_BYTES. */
  maxBytes?: number;
}

export async function sendHttpCall(call: HttpCall, options: SendOptions): Promise<Outcome> {
  const base = new URL(options.baseUrl);
  let { method, url, body } = call;
  const headers = { ...call.headers };
  for (let hop = 0; ; hop++) {
    let res: Response;
    try {
      res = await fetch(url, { method, headers, body, redirect: "manual", signal: options.signal });
    } catch (error) {
      return unreachable(method, url, error, options.signal);
    }
    const location = res.headers.get("location");
    if (res.status >= 300 && res.status < 400 && location) {
      await res.body?.cancel().catch(() => {});
      const next = URL.canParse(location, url.href) ? new URL(location, url) : null;
      if (!next || !withinBase(base, next) || hop >= MAX_REDIRECTS) {
        return errorOutcome("http_error", `${method} ${url.pathname} redirected outside the Environment's base URL`, {
          status: res.status,
        });
      }
      // 307 and 308 repeat the request; the others continue with a GET.
      if (res.status !== 307 && res.status !== 308) {
        method = "GET";
        body = undefined;
        delete headers["content-type"];
      }
      url = next;
      continue;
    }
    return answer(res, method, url, options);
  }
}

async function answer(res: Response, method: string, url: URL, options: SendOptions): Promise<Outcome> {
  const ok = res.status >= 200 && res.status < 300;
  const limit = ok ? (options.maxBytes ?? MAX_FRAME_BYTES) : ERROR_EXCERPT_BYTES;
  let read: { bytes: Buffer; complete: boolean };
  try {
    read = await readAtMost(res, limit);
  } catch (error) {
    return unreachable(method, url, error, options.signal);
  }
  const where = `${method} ${url.pathname}`;
  if (!ok) {
    return errorOutcome("http_error", `${where} answered HTTP ${res.status}`, {
      status: res.status,
      body: excerpt(read.bytes),
    });
  }
  if (!read.complete) {
    return errorOutcome("result_too_large", `${where} answered more than ${limit} bytes`, {
      status: res.status,
      limit,
    });
  }
  if (read.bytes.length === 0) return { status: "ok", value: null };
  const text = read.bytes.toString("utf8");
  if (!/[/+]json\b/i.test(res.headers.get("content-type") ?? "")) return { status: "ok", value: text };
  try {
    return { status: "ok", value: JSON.parse(text) };
  } catch {
    return errorOutcome("http_error", `${where} answered a malformed JSON body`, {
      status: res.status,
      body: excerpt(read.bytes),
    });
  }
}

/** Reads the body up to `limit` bytes; `complete` is false when there was more (the rest is dropped). */
async function readAtMost(res: Response, limit: number): Promise<{ bytes: Buffer; complete: boolean }> {
  if (!res.body) return { bytes: Buffer.alloc(0), complete: true };
  const reader = res.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks), complete: true };
    chunks.push(Buffer.from(value));
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      return { bytes: Buffer.concat(chunks).subarray(0, limit), complete: false };
    }
  }
}

/** Quoted into outcomes and setup errors, which are journaled: made storable (NUL → U+FFFD). */
function excerpt(bytes: Buffer): string {
  return storableText(bytes.subarray(0, ERROR_EXCERPT_BYTES).toString("utf8"));
}

function unreachable(method: string, url: URL, error: unknown, signal: AbortSignal): Outcome {
  const where = `${method} ${url.pathname}`;
  if (signal.aborted) {
    const timedOut = (signal.reason as Error | undefined)?.name === "TimeoutError";
    return errorOutcome("http_error", `${where} ${timedOut ? "timed out" : "was stopped before it was answered"}`);
  }
  const e = error as Error & { cause?: { code?: string; message?: string } };
  const reason = e.cause?.code ?? e.cause?.message ?? e.message;
  return errorOutcome("http_error", `${where} could not be completed: ${reason}`.slice(0, 8192));
}

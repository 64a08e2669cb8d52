/**
 * Sends one Environment request and turns its answer into an outcome: a 2xx JSON body is the value
 * (a 2xx text body its text, an empty one null); any other status, a malformed JSON body or a
 * network failure is `http_error` (with the status and at most 2 KB of the body); a body larger
 * than a frame may carry is `result_too_large`. Redirects are followed only inside the base URL, so
 * the Environment's headers never reach another origin. Each request, every redirect hop included,
 * goes through the egress guard: a target it refuses is `egress_denied`, and nothing was sent.
 */
import { errorOutcome, MAX_FRAME_BYTES, type Outcome, storableText } from "@aexhq/brain-contracts";
import { deniedOutcome } from "../egress/denied.js";
import type { HttpAnswer } from "../egress/exchange.js";
import type { Egress } from "../egress/guard.js";
import { type HttpCall, withinBase } from "./http-request.js";

/** How much of an error body the outcome keeps. */
export const ERROR_EXCERPT_BYTES = 2048;
const MAX_REDIRECTS = 5;

export interface SendOptions {
  /** The guard the request goes through. */
  egress: Pick<Egress, "exchange">;
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
  const maxBytes = (status: number) =>
    status >= 200 && status < 300 ? (options.maxBytes ?? MAX_FRAME_BYTES) : ERROR_EXCERPT_BYTES;
  for (let hop = 0; ; hop++) {
    let res: HttpAnswer;
    try {
      res = await options.egress.exchange(url, { method, headers, body, signal: options.signal, maxBytes });
    } catch (error) {
      return unreachable(method, url, error, options.signal);
    }
    const location = res.headers.location;
    if (res.status >= 300 && res.status < 400 && location) {
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
    return answer(res, method, url, maxBytes(res.status));
  }
}

function answer(res: HttpAnswer, method: string, url: URL, limit: number): Outcome {
  const where = `${method} ${url.pathname}`;
  if (res.status < 200 || res.status >= 300) {
    return errorOutcome("http_error", `${where} answered HTTP ${res.status}`, {
      status: res.status,
      body: excerpt(res.body),
    });
  }
  if (res.overflow) {
    return errorOutcome("result_too_large", `${where} answered more than ${limit} bytes`, {
      status: res.status,
      limit,
    });
  }
  if (res.body.length === 0) return { status: "ok", value: null };
  const text = res.body.toString("utf8");
  if (!/[/+]json\b/i.test(res.headers["content-type"] ?? "")) return { status: "ok", value: text };
  try {
    return { status: "ok", value: JSON.parse(text) };
  } catch {
    return errorOutcome("http_error", `${where} answered a malformed JSON body`, {
      status: res.status,
      body: excerpt(res.body),
    });
  }
}

/** Quoted into outcomes and setup errors, which are journaled: made storable (NUL → U+FFFD). */
function excerpt(bytes: Buffer): string {
  return storableText(bytes.subarray(0, ERROR_EXCERPT_BYTES).toString("utf8"));
}

function unreachable(method: string, url: URL, error: unknown, signal: AbortSignal): Outcome {
  const where = `${method} ${url.pathname}`;
  const denied = deniedOutcome(error, where);
  if (denied) return denied;
  if (signal.aborted) {
    const timedOut = (signal.reason as Error | undefined)?.name === "TimeoutError";
    return errorOutcome("http_error", `${where} ${timedOut ? "timed out" : "was stopped before it was answered"}`);
  }
  const e = error as NodeJS.ErrnoException;
  const reason = e.code ?? e.message;
  return errorOutcome("http_error", `${where} could not be completed: ${reason}`.slice(0, 8192));
}

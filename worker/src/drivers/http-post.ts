/**
 * One JSON POST from a worker to a URL an application serves (an HTTP tool), with the bounds a
 * worker needs: the request stops when `signal` aborts (deadline, call ended, shutdown), redirects
 * are not followed, and at most `maxBytes` of the answer are kept. The request goes through the
 * egress guard, the one client for what tenants name (HTTP Environments use it too).
 */

import { errorOutcome, type Outcome, storableText } from "@aexhq/brain-contracts";
import { deniedOutcome, type Egress, type HttpAnswer } from "@aexhq/brain-core/egress";

export type PostAnswer = HttpAnswer;

/** POSTs `body`, JSON text the caller serialised (and may have signed). */
export function postJson(
  egress: Pick<Egress, "exchange">,
  url: string,
  body: string,
  options: { signal: AbortSignal; maxBytes: number; headers?: Record<string, string> },
): Promise<PostAnswer> {
  return egress.exchange(new URL(url), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...options.headers },
    body,
    signal: options.signal,
    maxBytes: options.maxBytes,
  });
}

/** How much of an answer's body an http_error outcome keeps. */
export const BODY_EXCERPT_BYTES = 2048;

/** `http_error` for an answer that is not what the protocol expects (a non-2xx status, say). */
export function answerError(what: string, answer: PostAnswer): Outcome {
  // Journaled with the outcome: made storable (NUL → U+FFFD).
  const body = storableText(answer.body.subarray(0, BODY_EXCERPT_BYTES).toString("utf8"));
  const brain = brainErrorOf(body);
  const message = `${what}${brain ? `: ${brain.code}: ${brain.message}` : ""}`;
  return errorOutcome("http_error", message.slice(0, 8192), { status: answer.status, body });
}

/**
 * `http_error` for a URL that could not be reached (its text may hold credentials: never shown),
 * or `egress_denied` for one the guard refused: nothing was sent.
 */
export function unreachable(error: unknown): Outcome {
  const denied = deniedOutcome(error, "The request to the tool's URL");
  if (denied) return denied;
  const e = error as NodeJS.ErrnoException;
  const reason = e.code ?? (e.message || String(error));
  return errorOutcome("http_error", `The tool's URL could not be reached: ${reason}`.slice(0, 8192), {
    status: null,
  });
}

/** The `{ error: { code, message } }` body an SDK adapter answers with, when it is one. */
function brainErrorOf(text: string): { code: string; message: string } | null {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    if (typeof e?.code === "string" && typeof e.message === "string") return { code: e.code, message: e.message };
  } catch {}
  return null;
}

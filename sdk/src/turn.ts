import { Backoff } from "./backoff.js";
import {
  type ActivationResult,
  BrainError,
  type ErrorCode,
  isErrorCode,
  type JournalEvent,
  PostMessageResultSchema,
  payloadOf,
} from "./contracts.js";
import type { HttpClient } from "./http-client.js";
import type { HttpAnswer } from "./http-transport.js";
import { ndjsonLines } from "./ndjson.js";
import { readEvent } from "./parse-event.js";

/**
 * How long `send` keeps trying to reach Brain while every attempt fails (a server restarting, a
 * fail-over): long enough for a replacement server to take over, short enough that a Brain gone
 * for good is reported.
 */
export const TURN_RECONNECT_WINDOW_MS = 120_000;

/** What a failure while following the journal means for the wait. */
const TRANSIENT: ReadonlySet<ErrorCode> = new Set([
  "request_failed",
  "not_ready",
  "internal_error",
  "database_unavailable",
]);

/**
 * How long `send` lets Brain hold the answer to its message for the turn to end (`waitMs`): a
 * turn that ends sooner is answered by that one request; a longer one by the event stream.
 */
export const SEND_WAIT_MS = 10_000;

/** The journal answered the turn: with its text, or with the error `send` rejects with. */
type Verdict = { text: string } | { error: BrainError };

/**
 * The answer to `send`, from the response to its message post (`waitMs`, see SEND_WAIT_MS): the
 * activation when it ended within the wait, else the event stream from the message's sequence.
 * The sequence arrives in the headers as soon as the message has committed, so a body that breaks
 * afterwards (a timeout, a restart) still leaves the turn to follow; nothing is posted twice.
 */
export async function answerTurn(
  http: HttpClient,
  sessionPath: string,
  response: HttpAnswer,
  signal?: AbortSignal,
): Promise<string> {
  const header = Number(response.headers.get("brain-sequence") ?? Number.NaN);
  let sequence = Number.isSafeInteger(header) && header > 0 ? header : null;
  try {
    const answer = PostMessageResultSchema.safeParse(await response.json());
    if (answer.success) {
      sequence = answer.data.sequence;
      const activation = answer.data.activation;
      if (activation) {
        const verdict = verdictOf(activation, sequence);
        if ("error" in verdict) throw verdict.error;
        return verdict.text;
      }
    }
  } catch (err) {
    if (err instanceof BrainError || signal?.aborted) throw err;
    // The body broke after the headers: the message is in; its turn is followed below.
  }
  if (sequence === null) throw new BrainError("request_failed", `POST ${sessionPath}/messages: unexpected answer.`);
  return awaitTurn(http, sessionPath, sequence, signal);
}

/**
 * Waits for the end of the activation a user message started, by following the session's event
 * stream from the message on. The journal is the source of truth, so the wait holds no request
 * open on any one server: a stream that ends (a server shutting down, a slow reader dropped),
 * breaks (a crash, an idle-body timeout) or cannot be opened (a restart, a fail-over) is resumed
 * after the last sequence seen, with backoff, for as long as the turn lasts.
 */
export async function awaitTurn(
  http: HttpClient,
  sessionPath: string,
  messageSeq: number,
  signal?: AbortSignal,
): Promise<string> {
  let after = messageSeq;
  for await (const line of journalLines(http, sessionPath, () => ({ after, follow: true }), signal)) {
    const event = readEvent(line);
    // A malformed event would be malformed again after a reconnection: not worth retrying.
    if (event instanceof BrainError) throw event;
    const verdict = judge(event, messageSeq);
    if (verdict && "error" in verdict) throw verdict.error;
    if (verdict) return verdict.text;
    after = event.sequence;
  }
  throw new BrainError("request_failed", "The event stream ended.");
}

/**
 * The lines of a session's event stream, followed for as long as the caller reads: a stream that
 * ends, breaks or cannot be opened (a restart, a fail-over) is opened again with `query()` (the
 * caller's cursor), with backoff, until Brain has been unreachable for TURN_RECONNECT_WINDOW_MS.
 * Brain's own refusals (not TRANSIENT) and the caller's abort end it with their error.
 */
export async function* journalLines(
  http: HttpClient,
  sessionPath: string,
  query: () => Record<string, string | number | boolean>,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  const backoff = new Backoff();
  let failingSince: number | null = null;
  for (;;) {
    signal?.throwIfAborted();
    try {
      const response = await http.fetch("GET", `${sessionPath}/events`, { query: query(), signal });
      failingSince = null;
      for await (const line of ndjsonLines(response.body ?? new ReadableStream())) {
        yield line;
        backoff.reset();
      }
    } catch (err) {
      if (signal?.aborted) throw err;
      // A broken body (reset, idle timeout) is a plain TypeError; Brain's own refusals are final.
      if (err instanceof BrainError && !TRANSIENT.has(err.code)) throw err;
      failingSince ??= Date.now();
      if (Date.now() - failingSince > TURN_RECONNECT_WINDOW_MS) throw err;
    }
    await delay(backoff.next(), signal);
  }
}

/** The answer an event gives to the wait for message `messageSeq`'s turn, if any. */
export function judge(event: JournalEvent, messageSeq: number): Verdict | null {
  if (event.kind === "session_ended") {
    return { error: new BrainError("turn_cancelled", "The session ended before the turn finished.") };
  }
  const p = payloadOf(event, "activation_ended");
  if (!p || p.message !== messageSeq) return null;
  return verdictOf({ sequence: event.sequence, status: p.status, text: p.text, error: p.error }, messageSeq);
}

/** What an ended activation (a journal record, or the answer to a message post) means for `send`. */
function verdictOf(
  a: Pick<ActivationResult, "sequence"> & { status: unknown; text: unknown; error?: unknown },
  messageSeq: number,
): Verdict {
  const details = { sequence: a.sequence, message: messageSeq };
  if (a.status === "completed") return { text: typeof a.text === "string" ? a.text : "" };
  if (a.status === "cancelled") return { error: new BrainError("turn_cancelled", "The turn was cancelled.", details) };
  const error = (a.error ?? {}) as { code?: unknown; message?: unknown; details?: unknown };
  const message = typeof error.message === "string" ? error.message : "The turn failed.";
  // The provider's numbers (model_context_exceeded's tokens and window) join the turn's.
  const more = error.details !== null && typeof error.details === "object" ? error.details : {};
  if (isErrorCode(error.code)) return { error: new BrainError(error.code, message, { ...more, ...details }) };
  // A journal written before every failure carried a code, or a code this SDK does not know.
  return { error: new BrainError("request_failed", `The turn failed: ${String(error.code ?? "no code")}.`, details) };
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

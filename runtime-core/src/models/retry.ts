import { storableText } from "@aexhq/brain-contracts";
import { type ModelAttempt, type ModelCallContext, ModelCallError } from "./types.js";

/**
 * Retries of a model request the provider certainly did not process: an answer of 429, 529 or
 * another 5xx status (the provider said so before any answer), or a connection refused. Nothing
 * else is retried: a timeout, a stream cut short or an aborted request may have been acted on,
 * and is journaled as it is (`unknown` when the caller stopped it), never replayed.
 */
export const DEFAULT_MAX_ATTEMPTS = 3;
/** Exponential back-off: attempt n (1-based) waits up to BASE · 2^(n-1), with full jitter. */
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;
/** A `retry-after` longer than this is not waited for: the call fails with the provider's error. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Runs `attempt` until it answers, fails with what may not be retried, or `maxAttempts` are used:
 * each retry waits (retryDelay) unless the caller stops meanwhile. When there was more than one
 * attempt, every one goes to `context.attempts`, for the model_call_ended record.
 */
export async function withRetries<T>(
  context: ModelCallContext,
  maxAttempts: number,
  attempt: () => Promise<T>,
): Promise<T> {
  const tried: ModelAttempt[] = [];
  for (let n = 1; ; n++) {
    try {
      const answer = await attempt();
      if (tried.length > 0) context.attempts?.push(...tried, { status: 200 });
      return answer;
    } catch (error) {
      const wait = isRetryable(error) && n < maxAttempts ? retryDelay(n, error, context.deadline ?? null) : null;
      if (wait === null || !(error instanceof ModelCallError)) {
        if (tried.length > 0 && error instanceof ModelCallError) context.attempts?.push(...tried, attemptOf(error));
        throw error;
      }
      tried.push(attemptOf(error, wait));
      await pause(wait, context.signal).catch((stopped: unknown) => {
        context.attempts?.push(...tried);
        throw stopped;
      });
    }
  }
}

export function isRetryable(error: unknown): error is ModelCallError {
  if (!(error instanceof ModelCallError)) return false;
  if (error.status !== undefined) return error.status === 429 || error.status >= 500;
  return error.refused;
}

/**
 * How long to wait before the attempt after `attempt`: the provider's `retry-after` when it gave
 * one, else full-jitter back-off. Null when it is not worth waiting (past the cap, or the deadline).
 */
export function retryDelay(attempt: number, error: ModelCallError, deadline: number | null): number | null {
  const backoff = Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  const wait = error.retryAfterMs ?? backoff;
  if (wait > MAX_RETRY_AFTER_MS) return null;
  if (deadline !== null && Date.now() + wait >= deadline) return null;
  return Math.round(wait);
}

/** `retry-after` (seconds or an HTTP date) or OpenAI's `retry-after-ms`, in ms; undefined if absent. */
export function retryAfterOf(headers: Headers): number | undefined {
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.has("retry-after-ms") && Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (value.trim() !== "" && Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** An attempt as the journal keeps it: its status and error, and the wait before the next. */
export function attemptOf(error: ModelCallError, waitMs?: number): ModelAttempt {
  return {
    ...(error.status !== undefined ? { status: error.status } : {}),
    error: { code: error.code, message: storableText(error.message) },
    ...(waitMs !== undefined ? { waitMs } : {}),
  };
}

/** Waits `ms`, or rejects with the signal's reason when it aborts first. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

import { cappedResponse } from "../egress/capped.js";
import { egressDeniedIn } from "../egress/denied.js";
import { contextExceeded } from "./context-window.js";
import { DEFAULT_MAX_ATTEMPTS, retryAfterOf, withRetries } from "./retry.js";
import { type ModelCallContext, ModelCallError, type ProviderTransport } from "./types.js";
import { object, string } from "./wire.js";

/**
 * The HTTP side shared by the real providers: one POST, one deadline for the whole exchange (the
 * stream included), caller aborts, and the mapping of every failure to a documented model_* code.
 * Nothing here logs; every message that leaves is scrubbed of the API key. fetch (the egress
 * guard's): a provider call is bounded by its own timeout, not a tool's deadline, and its answer
 * is a stream read as it arrives, capped at the transport's byte limit.
 */
export interface ProviderHttpRequest {
  /** Names the provider in messages ("OpenAI", "Anthropic"). */
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /** Redacted from every error message, whatever the provider echoes back. */
  apiKey: string;
  /** Per attempt. */
  timeoutMs: number;
  /** Attempts in all, retries included (retry.ts); default DEFAULT_MAX_ATTEMPTS. */
  maxAttempts?: number | undefined;
}

export const DEFAULT_TIMEOUT_MS = 60_000;
/** Messages are cut to this length after redaction: a short head and ~1000 chars of the provider's words. */
const MAX_MESSAGE_CHARS = 1100;
/** An error body is read up to this size; the rest is not worth waiting for. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

type Code = ModelCallError["code"];

/**
 * POSTs `request` and hands a successful response to `read`, which consumes its body. Rejects with
 * a ModelCallError, or with `context.signal.reason` when the caller aborted: a stop is not a
 * provider failure, and the caller must be able to tell them apart. A request the provider
 * certainly did not process is tried again (retry.ts), up to `request.maxAttempts` in all; when it
 * was, every attempt goes to `context.attempts`.
 */
export async function providerCall<T>(
  request: ProviderHttpRequest,
  context: ModelCallContext,
  transport: ProviderTransport,
  read: (response: Response) => Promise<T>,
): Promise<T> {
  const maxAttempts = request.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  return withRetries(context, maxAttempts, () => attemptOnce(request, context, transport, read));
}

function attemptOnce<T>(
  request: ProviderHttpRequest,
  context: ModelCallContext,
  transport: ProviderTransport,
  read: (response: Response) => Promise<T>,
): Promise<T> {
  const { provider, timeoutMs, apiKey } = request;
  const work = async (signal: AbortSignal) => {
    const answered = await transport.fetch(request.url, {
      method: "POST",
      headers: request.headers,
      body: JSON.stringify(request.body),
      signal,
      // A redirect would carry the key to wherever it points; it is answered as an error instead.
      redirect: "manual",
    });
    const response = cappedResponse(answered, transport.maxAnswerBytes, () => tooLarge(request, transport));
    if (!response.ok) throw await httpError(provider, response);
    return await read(response);
  };
  return attemptWithin(context.signal, { label: provider, timeoutMs, secrets: [apiKey] }, work, (error) =>
    classify(provider, error),
  );
}

/**
 * One attempt of a model request, as every provider makes it: one deadline for the whole exchange
 * (the stream included), the caller's abort, and every failure as a documented code with no secret
 * in its message. Rejects with `caller.reason` when the caller aborted (a stop is not a provider
 * failure); settles the moment it is stopped, even if a body read does not notice the abort.
 */
export async function attemptWithin<T>(
  caller: AbortSignal,
  attempt: { label: string; timeoutMs: number; secrets: string[] },
  work: (signal: AbortSignal) => Promise<T>,
  classifyError: (error: unknown) => ModelCallError,
): Promise<T> {
  if (caller.aborted) throw caller.reason;
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, attempt.timeoutMs);
  const onAbort = () => controller.abort();
  caller.addEventListener("abort", onAbort, { once: true });
  const stopped = new Promise<never>((_, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
  });
  stopped.catch(() => {});
  const running = work(controller.signal);
  running.catch(() => {});
  try {
    return await Promise.race([running, stopped]);
  } catch (error) {
    if (caller.aborted) throw caller.reason;
    if (timedOut) {
      throw new ModelCallError("model_timeout", `${attempt.label} did not answer within ${attempt.timeoutMs} ms`);
    }
    throw scrubbed(classifyError(error), ...attempt.secrets);
  } finally {
    clearTimeout(timer);
    caller.removeEventListener("abort", onAbort);
    // Closes the connection of a response left unread (a malformed stream, an early error).
    controller.abort();
  }
}

/** The code for an HTTP status the provider answered with. */
export function statusCode(status: number): Code {
  if (status === 401 || status === 403) return "model_auth_failed";
  if (status === 429) return "model_rate_limited";
  if ([400, 404, 409, 413, 422].includes(status)) return "model_bad_request";
  if (status >= 500) return "model_unavailable";
  return "model_error";
}

/** The code for a provider's error `type` (Anthropic's error events, OpenAI-style error objects). */
export function errorTypeCode(type: string | undefined): Code {
  switch (type) {
    case "authentication_error":
    case "permission_error":
      return "model_auth_failed";
    case "rate_limit_error":
    case "rate_limit_exceeded":
      return "model_rate_limited";
    case "invalid_request_error":
    case "not_found_error":
      return "model_bad_request";
    case "overloaded_error":
    case "api_error":
    case "server_error":
      return "model_unavailable";
    default:
      return "model_error";
  }
}

/**
 * The provider's own explanation from an error body: `{error: {message, type}}` (both providers
 * and most compatible servers), `{message}`, `{error: "..."}`, `{detail}`, or the raw text.
 */
export function providerMessage(body: unknown): { message: string; type?: string } {
  const json = object(body);
  const error = object(json?.error);
  const type = string(error?.type) ?? string(error?.code);
  const message = string(error?.message) ?? string(json?.error) ?? string(json?.message) ?? string(json?.detail) ?? "";
  return type === undefined ? { message } : { message, type };
}

/** A ModelCallError for an error object a provider sent inside a 200 answer or a stream. */
export function streamedError(provider: string, body: unknown): ModelCallError {
  const { message, type } = providerMessage(body);
  return new ModelCallError(errorTypeCode(type), describe(`${provider} reported an error`, message, type));
}

async function httpError(provider: string, response: Response): Promise<ModelCallError> {
  const text = await readLimited(response);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  const { message, type } = typeof parsed === "string" ? { message: parsed.trim() } : providerMessage(parsed);
  const head = `${provider} answered HTTP ${response.status}`;
  const retryAfterMs = retryAfterOf(response.headers);
  const context = response.status < 500 ? contextExceeded(message, string(object(object(parsed)?.error)?.code)) : null;
  if (context) {
    return new ModelCallError("model_context_exceeded", describe(head, message, type), response.status, { context });
  }
  return new ModelCallError(statusCode(response.status), describe(head, message, type), response.status, {
    retryAfterMs,
  });
}

export function describe(head: string, message: string, type?: string): string {
  return `${head}${type ? ` (${type})` : ""}${message ? `: ${message}` : ""}`;
}

async function readLimited(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < MAX_ERROR_BODY_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } finally {
    reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY_BYTES));
}

function tooLarge(request: ProviderHttpRequest, transport: ProviderTransport): ModelCallError {
  return new ModelCallError(
    "answer_too_large",
    `${request.provider} answered more than ${transport.maxAnswerBytes} bytes; the rest was not read`,
  );
}

export function classify(provider: string, error: unknown): ModelCallError {
  if (error instanceof ModelCallError) return error;
  const denied = egressDeniedIn(error);
  if (denied) return new ModelCallError("egress_denied", `${provider} was not called: ${denied.message}`);
  // undici rejects with TypeError("fetch failed") before an answer and TypeError("terminated")
  // when the connection drops mid-stream; the cause names the network failure.
  if (error instanceof TypeError && error.cause !== undefined) {
    const cause = error.cause as { code?: unknown; message?: unknown };
    const why = [cause.code, cause.message].filter((s) => typeof s === "string" && s !== "").join(" ");
    return new ModelCallError(
      "model_unavailable",
      `the connection to ${provider} failed${why ? `: ${why}` : ""}`,
      undefined,
      {
        refused: cause.code === "ECONNREFUSED",
      },
    );
  }
  const why = error instanceof Error ? error.message : String(error);
  return new ModelCallError("model_error", `${provider} call failed: ${why}`);
}

/**
 * Removes the key from a message, in the spellings a server might echo it (as sent, JSON-escaped,
 * URL-encoded), then cuts it to length. Redaction comes first: a cut could leave half a key that
 * no longer matches.
 */
export function scrubbed(error: ModelCallError, ...secrets: string[]): ModelCallError {
  const forms = new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1), encodeURIComponent(s)]));
  let message = error.message;
  for (const form of forms) if (form.length > 0) message = message.split(form).join("[redacted]");
  if (message.length > MAX_MESSAGE_CHARS) message = `${message.slice(0, MAX_MESSAGE_CHARS)}…`;
  if (message === error.message) return error;
  return new ModelCallError(error.code, message, error.status, {
    retryAfterMs: error.retryAfterMs,
    refused: error.refused,
    context: error.context,
  });
}

/** Whether a successful answer is one JSON document rather than an event stream. */
export function isJsonResponse(response: Response): boolean {
  const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || type.endsWith("+json");
}

/** A successful answer's JSON document, or model_error when it is not one. */
export async function jsonBody(provider: string, response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new ModelCallError("model_error", `${provider} answered malformed JSON`);
  }
}

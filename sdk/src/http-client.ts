import type { z } from "zod";
import { BrainError, ErrorBodySchema, isErrorCode } from "./contracts.js";
import { fetchTransport, type HttpAnswer, nodeTransport, type Transport } from "./http-transport.js";

export interface RequestSpec<T> {
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  idempotencyKey?: string | undefined;
  /** Validates the JSON answer; omitted for answers without a body (204). */
  schema?: z.ZodType<T>;
  signal?: AbortSignal | undefined;
  /** A non-JSON body (component uploads). */
  raw?: { body: Uint8Array; contentType: string };
  /** Failure statuses returned as responses rather than thrown (HEAD → 404). */
  allowStatus?: number[];
}

/** Brain's HTTP API with a bearer token (operator or application): JSON in, validated JSON out, BrainError on failure. */
export class HttpClient {
  readonly baseUrl: string;
  private readonly transport: Transport;

  /** `fetchImpl`: the application's own fetch (BrainOptions.fetch); else node:http (http-transport.ts). */
  constructor(
    baseUrl: string,
    private readonly token: string,
    fetchImpl?: typeof fetch,
  ) {
    // Joined by string, not `new URL(path, base)`, so a base with a path prefix keeps it.
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.transport = fetchImpl ? fetchTransport(fetchImpl) : nodeTransport();
  }

  url(path: string, query?: RequestSpec<unknown>["query"]): string {
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined) search.set(key, String(value));
    }
    const text = search.toString();
    return `${this.baseUrl}${path}${text === "" ? "" : `?${text}`}`;
  }

  async request<T>(method: string, path: string, spec: RequestSpec<T> = {}): Promise<T> {
    const response = await this.fetch(method, path, spec);
    if (spec.schema === undefined) {
      // Read to the end, so that the connection can carry the next request.
      await response.text().catch(() => "");
      return undefined as T;
    }
    let json: unknown;
    try {
      json = await response.json();
    } catch {
      throw new BrainError("request_failed", `${method} ${path}: the answer is not JSON.`);
    }
    const parsed = spec.schema.safeParse(json);
    if (!parsed.success) {
      throw new BrainError("request_failed", `${method} ${path}: unexpected answer shape.`, parsed.error.issues);
    }
    return parsed.data;
  }

  /** Sends a request and returns the successful response unread (for streamed bodies). */
  async fetch(method: string, path: string, spec: RequestSpec<unknown> = {}): Promise<HttpAnswer> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    if (spec.raw !== undefined) headers["content-type"] = spec.raw.contentType;
    if (spec.idempotencyKey !== undefined) headers["idempotency-key"] = spec.idempotencyKey;
    let response: HttpAnswer;
    try {
      response = await this.transport(this.url(path, spec.query), {
        method,
        headers,
        ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        ...(spec.raw === undefined ? {} : { body: spec.raw.body }),
        ...(spec.signal === undefined ? {} : { signal: spec.signal }),
      });
    } catch (err) {
      if (spec.signal?.aborted) throw err;
      const reason =
        err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
      throw new BrainError("request_failed", `${method} ${path}: ${reason}`);
    }
    if (!response.ok && !spec.allowStatus?.includes(response.status))
      throw await errorFrom(response, `${method} ${path}`);
    return response;
  }
}

/** A BrainError from a failed answer: its error body when it has one, `request_failed` otherwise. */
export async function errorFrom(response: HttpAnswer, what: string): Promise<BrainError> {
  const text = await response.text().catch(() => "");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return new BrainError("request_failed", `${what}: HTTP ${response.status}.`, { status: response.status });
  }
  const body = ErrorBodySchema.safeParse(json);
  if (!body.success) {
    return new BrainError("request_failed", `${what}: HTTP ${response.status}.`, { status: response.status });
  }
  const { code, message, details } = body.data.error;
  if (isErrorCode(code)) return new BrainError(code, message, details);
  return new BrainError("request_failed", `${what}: ${code}: ${message}`, { status: response.status, code, details });
}

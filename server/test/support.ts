import { createHash } from "node:crypto";
import {
  ERROR_CODES,
  ErrorBodySchema,
  type JournalEvent,
  JournalEventSchema,
  type PostMessageResult,
  type Session,
} from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db";
import { expect } from "vitest";

/** What a test needs to talk to a running Brain: its base URL and operator token. */
export interface Target {
  url: string;
  token: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is empty or not JSON. */
  json: unknown;
}

export interface RequestOptions {
  /** Serialized with JSON.stringify and sent as application/json. */
  body?: unknown;
  /** Sent as is (overrides `body`), with `contentType`. */
  raw?: string | Uint8Array;
  contentType?: string;
  /** The bearer token; null sends no Authorization header. Default: the operator token. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** One HTTP request over the real socket. */
export async function request(target: Target, method: string, path: string, options: RequestOptions = {}) {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? target.token : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  let body: string | Uint8Array | undefined;
  if (options.raw !== undefined) {
    body = options.raw;
    if (options.contentType) headers["content-type"] = options.contentType;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] = options.contentType ?? "application/json";
  }
  const res = await fetch(`${target.url}${path}`, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json } satisfies Answer;
}

/** Asserts a documented API error: its HTTP status, and the `{ error: { code, message } }` body. */
export function expectError(answer: Answer, code: keyof typeof ERROR_CODES): { details?: unknown } {
  const parsed = ErrorBodySchema.safeParse(answer.json);
  expect(parsed.success, `not an error body (${answer.status}): ${answer.text.slice(0, 500)}`).toBe(true);
  expect(parsed.data?.error.code, answer.text.slice(0, 500)).toBe(code);
  expect(answer.status).toBe(ERROR_CODES[code].http);
  expect(parsed.data?.error.message.length).toBeGreaterThan(0);
  return parsed.data?.error ?? {};
}

export const scripted = (...texts: string[]) => ({
  provider: "scripted" as const,
  script: texts.map((text) => ({ text })),
});

export async function createSession(target: Target, body: Record<string, unknown> = {}): Promise<Session> {
  const answer = await request(target, "POST", "/v1/sessions", { body: { model: scripted(), ...body } });
  expect(answer.status, answer.text).toBe(201);
  return answer.json as Session;
}

export async function postMessage(
  target: Target,
  sessionId: string,
  text: string,
  options: { wait?: boolean; key?: string } = {},
): Promise<PostMessageResult> {
  const answer = await request(target, "POST", `/v1/sessions/${sessionId}/messages`, {
    body: { text, wait: options.wait ?? false },
    headers: options.key ? { "idempotency-key": options.key } : {},
  });
  expect(answer.status, answer.text).toBe(201);
  return answer.json as PostMessageResult;
}

export interface RowCounts {
  sessions: number;
  records: number;
  hosts: number;
  idempotency_keys: number;
}

/** Rows in the tables a request could write to. */
export async function countRows(sql: Sql): Promise<RowCounts> {
  const [row] = await sql<RowCounts[]>`
    SELECT (SELECT count(*) FROM sessions)::int AS sessions,
           (SELECT count(*) FROM records)::int AS records,
           (SELECT count(*) FROM hosts)::int AS hosts,
           (SELECT count(*) FROM idempotency_keys)::int AS idempotency_keys`;
  return row!;
}

/** Every row of every table in these schemas, as text (bytea shows as hex). */
export async function dumpSchemas(sql: Sql, schemas: string[]): Promise<string> {
  const tables = await sql<{ schema: string; name: string }[]>`
    SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
    WHERE table_schema = ANY(${schemas}) AND table_type = 'BASE TABLE'`;
  expect(tables.length).toBeGreaterThan(0);
  const parts: string[] = [];
  for (const t of tables) {
    const rows = await sql.unsafe<{ row: string }[]>(
      `SELECT t::text AS row FROM ${quote(t.schema)}.${quote(t.name)} t`,
    );
    for (const r of rows) parts.push(r.row);
  }
  return parts.join("\n");
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

/** Reads an NDJSON event stream; each line is validated as a JournalEvent. */
export async function readEvents(
  target: Target,
  sessionId: string,
  query: string,
  options: { until?: (events: JournalEvent[]) => boolean; signal?: AbortSignal } = {},
): Promise<{ status: number; contentType: string | null; events: JournalEvent[]; ended: boolean }> {
  const abort = new AbortController();
  const onOuter = () => abort.abort();
  options.signal?.addEventListener("abort", onOuter);
  const res = await fetch(`${target.url}/v1/sessions/${sessionId}/events?${query}`, {
    headers: { authorization: `Bearer ${target.token}` },
    signal: abort.signal,
  });
  const events: JournalEvent[] = [];
  if (res.status !== 200 || !res.body) {
    await res.body?.cancel();
    return { status: res.status, contentType: res.headers.get("content-type"), events, ended: true };
  }
  const decoder = new TextDecoder();
  let buffered = "";
  let ended = false;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      buffered += decoder.decode(value, { stream: true });
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) events.push(JournalEventSchema.parse(JSON.parse(line)));
      if (options.until?.(events)) break;
    }
  } catch (error) {
    if (!abort.signal.aborted) throw error;
  } finally {
    options.signal?.removeEventListener("abort", onOuter);
    abort.abort();
  }
  expect(buffered, "a partial line at the end of the stream").toBe("");
  return { status: res.status, contentType: res.headers.get("content-type"), events, ended };
}

/** Asserts the sequences run from `first`, one by one, with no gap and no duplicate. */
export function expectContiguous(events: JournalEvent[], first: number): void {
  const seqs = events.map((e) => e.sequence);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => first + i));
}

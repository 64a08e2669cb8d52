// Talking to a running Brain over its HTTP API as a test does: requests with the operator's (or
// another) token, documented errors, sessions and messages, the event stream, and the rows a
// request may have written.
import { createHash } from "node:crypto";
import {
  ERROR_CODES,
  ErrorBodySchema,
  type JournalEvent,
  JournalEventSchema,
  type PostMessageResult,
  type Session,
} from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import { expect, vi } from "vitest";
import { scripted } from "./turns.js";
import { within } from "./wait.js";

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
  signal?: AbortSignal;
  /** Answer once the headers are in, and cancel the body (a stream that would not end). */
  headersOnly?: boolean;
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
  const res = await fetch(`${target.url}${path}`, { method, headers, body, signal: options.signal });
  if (options.headersOnly) {
    await res.body?.cancel();
    return { status: res.status, headers: res.headers, text: "", json: undefined } satisfies Answer;
  }
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

/** A tool placement on a host environment, as session creation takes it. */
export const hostTool = (name: string) => ({
  name,
  description: "A tool.",
  inputSchema: { type: "object" },
  outputSchema: null,
  env: { type: "host", name: "app" },
});

/** Waits until the activation that the message at `messageSeq` started has ended. */
export async function activationEnded(sql: Sql, sessionId: string, messageSeq: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const [row] = await sql`
        SELECT 1 FROM records WHERE session_id = ${sessionId} AND kind = 'activation_ended'
          AND payload->>'message' = ${String(messageSeq)}`;
      expect(row).toBeDefined();
    },
    { timeout: 10_000, interval: 10 },
  );
}

export async function createSession(target: Target, body: Record<string, unknown> = {}): Promise<Session> {
  const answer = await request(target, "POST", "/v1/sessions", { body: { model: scripted(), ...body } });
  expect(answer.status, answer.text).toBe(201);
  return answer.json as Session;
}

export async function postMessage(
  target: Target,
  sessionId: string,
  text: string,
  options: { wait?: boolean; key?: string; signal?: AbortSignal } = {},
): Promise<PostMessageResult> {
  const answer = await request(target, "POST", `/v1/sessions/${sessionId}/messages`, {
    body: { text, wait: options.wait ?? false },
    headers: options.key ? { "idempotency-key": options.key } : {},
    signal: options.signal,
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

export interface EventStream {
  status: number;
  contentType: string | null;
  /** Every event received so far, each validated as a JournalEvent. */
  events: JournalEvent[];
  /** Settles when the server ends the stream (true) or when close() cut it (false). */
  done: Promise<boolean>;
  /** Disconnects, as a client that goes away mid-stream. */
  close(): Promise<void>;
  /** Resolves once an event with this sequence (or a later one) has arrived. */
  reached(sequence: number, timeoutMs?: number): Promise<void>;
}

const openStreams = new Set<AbortController>();

/** Disconnects every event stream still open (a server waits for open streams when it closes). */
export function closeStreams(): void {
  for (const abort of openStreams) abort.abort();
  openStreams.clear();
}

/** Opens `GET /v1/sessions/:id/events?<query>` and reads its NDJSON lines as they arrive. */
export async function openEvents(target: Target, sessionId: string, query: string): Promise<EventStream> {
  const abort = new AbortController();
  openStreams.add(abort);
  // The answer's headers may only come with the first record: bound the wait, and stay abortable.
  const res = await within(
    fetch(`${target.url}/v1/sessions/${sessionId}/events?${query}`, {
      headers: { authorization: `Bearer ${target.token}` },
      signal: abort.signal,
    }),
    `the headers of the event stream ?${query}`,
  ).catch((error: unknown) => {
    abort.abort();
    openStreams.delete(abort);
    throw error;
  });
  const events: JournalEvent[] = [];
  const listeners = new Set<() => void>();
  const read = async (): Promise<boolean> => {
    if (res.status !== 200 || !res.body) {
      await res.body?.cancel();
      return true;
    }
    const decoder = new TextDecoder();
    let buffered = "";
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffered += decoder.decode(value, { stream: true });
        const lines = buffered.split("\n");
        buffered = lines.pop() ?? "";
        for (const line of lines) events.push(JournalEventSchema.parse(JSON.parse(line)));
        for (const fn of listeners) fn();
      }
    } catch (error) {
      if (abort.signal.aborted) return false;
      throw error;
    } finally {
      for (const fn of listeners) fn();
    }
    if (buffered !== "") throw new Error(`a partial line at the end of the stream: ${buffered.slice(0, 200)}`);
    return true;
  };
  const done = read();
  let ended = false;
  const stream: EventStream = {
    status: res.status,
    contentType: res.headers.get("content-type"),
    events,
    done,
    async close() {
      abort.abort();
      await done.catch(() => {});
    },
    reached(sequence, timeoutMs = 10_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          const last = events.at(-1)?.sequence ?? 0;
          if (last >= sequence) finish();
          else if (ended) finish(new Error(`the stream ended at ${last}, before ${sequence}`));
        };
        const timer = setTimeout(() => {
          const last = events.at(-1)?.sequence ?? 0;
          finish(new Error(`the stream is at ${last}; ${sequence} did not arrive within ${timeoutMs} ms`));
        }, timeoutMs);
        const finish = (error?: Error) => {
          clearTimeout(timer);
          listeners.delete(check);
          if (error) reject(error);
          else resolve();
        };
        listeners.add(check);
        check();
        void done.then(check, check);
      });
    },
  };
  void done.then(
    () => {
      ended = true;
      openStreams.delete(abort);
    },
    () => {
      ended = true;
      openStreams.delete(abort);
    },
  );
  return stream;
}

/** Reads a whole stream, which must end by itself within `ms`. */
export async function readEvents(target: Target, sessionId: string, query: string, ms = 10_000) {
  const stream = await openEvents(target, sessionId, query);
  try {
    await within(stream.done, `the event stream ?${query} to end`, ms);
  } finally {
    await stream.close();
  }
  return stream;
}

/** Asserts the sequences run from `first`, one by one, with no gap and no duplicate. */
export function expectContiguous(events: JournalEvent[], first: number): void {
  const seqs = events.map((e) => e.sequence);
  expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => first + i));
}

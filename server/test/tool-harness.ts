// Shared helpers of the tool-semantics suites: a real Brain (startBrain), the public SDK, and SQL
// against the journal. Nothing here sleeps to "wait for" something: conditions are polled with a
// deadline, and handlers report through promises.
import type { ModelConfig, Outcome } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db";

export interface JournalRow {
  seq: number;
  kind: string;
  payload: Record<string, unknown>;
}

export interface ToolCallRow {
  seq: number;
  tool: string;
  status: "pending" | "running" | "returned" | "ended";
  outcome: Outcome | { status: "ok" } | null;
  deadline_at: Date | null;
}

/** A promise with its resolve/reject exposed. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Rejects with a message naming `what` if `promise` does not settle within `ms`. */
export async function within<T>(promise: Promise<T>, what: string, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Polls `probe` until it returns something other than undefined/null/false, and returns that. A
 * bounded wait for a condition (a committed row, say), not a sleep: it fails with `what` at the
 * deadline.
 */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A scripted model: step 1 calls the given tools (in one model step), step 2 answers "done". */
export function callsThenDone(...calls: { name: string; input: unknown }[]): ModelConfig {
  return {
    provider: "scripted",
    script: [{ toolCalls: calls.map((c) => ({ name: c.name, input: c.input as never })) }, { text: "done" }],
  };
}

export async function journalOf(sql: Sql, sessionId: string): Promise<JournalRow[]> {
  return sql<JournalRow[]>`SELECT seq, kind, payload FROM journal WHERE session_id = ${sessionId} ORDER BY seq`;
}

export async function recordAt(sql: Sql, sessionId: string, seq: number): Promise<JournalRow | undefined> {
  const [row] = await sql<JournalRow[]>`
    SELECT seq, kind, payload FROM journal WHERE session_id = ${sessionId} AND seq = ${seq}`;
  return row;
}

export async function toolCallsOf(sql: Sql, sessionId: string): Promise<ToolCallRow[]> {
  return sql<ToolCallRow[]>`
    SELECT seq, tool, status, outcome, deadline_at FROM tool_calls WHERE session_id = ${sessionId} ORDER BY seq`;
}

export async function toolCall(sql: Sql, sessionId: string, seq: number): Promise<ToolCallRow | undefined> {
  const [row] = await sql<ToolCallRow[]>`
    SELECT seq, tool, status, outcome, deadline_at FROM tool_calls WHERE session_id = ${sessionId} AND seq = ${seq}`;
  return row;
}

/** The session's only tool call, once it has ended. */
export async function endedCall(sql: Sql, sessionId: string): Promise<ToolCallRow> {
  return until(`the tool call of ${sessionId} to end`, async () => {
    const calls = await toolCallsOf(sql, sessionId);
    if (calls.length > 1) throw new Error(`expected one tool call, found ${calls.length}`);
    return calls[0]?.status === "ended" ? calls[0] : undefined;
  });
}

/** Records of one call (its extension events, results, return and end), in journal order. */
export function recordsOfCall(journal: JournalRow[], call: number): JournalRow[] {
  return journal.filter((r) => r.payload.call === call && r.kind !== "model_call_ended");
}

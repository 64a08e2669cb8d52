// Shared helpers of the tool-semantics suites: a real Brain (startBrain), the public SDK, and SQL
// against the journal. Nothing here sleeps to "wait for" something: conditions are polled with a
// deadline, and handlers report through promises.
import { Brain, type ModelConfig, type Outcome } from "@aexhq/brain";
import type { Sql } from "@aexhq/brain-db/connect";
import { afterAll } from "vitest";
import { type InProcessBrain, startBrain } from "./brain.js";
import { startedBeforeAll, startedBeforeEach } from "./fixtures.js";
import { until } from "./wait.js";

export { type Deferred, deferred, until, within } from "./wait.js";

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

/**
 * A server for the file's tests (its own database, `env` added to its configuration) and a fresh
 * SDK client of it for each test, so no test sees another's host connection or handlers.
 */
export function serverAndClient(env: Record<string, string> = {}): { server: InProcessBrain; client: Brain } {
  const server = startedBeforeAll(() => startBrain({ env }));
  const client = startedBeforeEach(() => new Brain({ url: server.url, token: server.token }));
  return { server, client };
}

/**
 * For files whose tests each need a server of their own configuration: `setup(env)` starts a
 * server and an SDK client of it, and every one started is closed after the file.
 */
export function serversOnDemand(): (env?: Record<string, string>) => Promise<{ brain: InProcessBrain; client: Brain }> {
  const started: { brain: InProcessBrain; client: Brain }[] = [];
  afterAll(async () => {
    for (const { client } of started) await client.close().catch(() => {});
    for (const { brain } of started) await brain.close().catch(() => {});
  });
  return async (env = {}) => {
    const brain = await startBrain({ env });
    const client = new Brain({ url: brain.url, token: brain.token });
    started.push({ brain, client });
    return { brain, client };
  };
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

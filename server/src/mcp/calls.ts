import { randomUUID } from "node:crypto";
import { BrainError, findUnstorable, type ToolPlacement, UNSTORABLE_TEXT } from "@aexhq/brain-contracts";
import { Touch } from "@aexhq/brain-db/commits";
import {
  appendRecords,
  type CallAnswer,
  endCalls,
  mcpCallState,
  mcpSession,
  type NewMcpTask,
  sessionNamedHosts,
  withMcpTask,
} from "@aexhq/brain-db/ops";
import { withWorkerJobs } from "../loop/worker-jobs.js";
import type { Services } from "../services.js";
import { waitOnSession } from "../session-wait.js";
import { mcpTools } from "./answers.js";

export type McpCallDeps = Pick<
  Services,
  "sql" | "writer" | "dispatch" | "boss" | "deadlineJobs" | "bus" | "closing" | "quotas"
>;

/** Who asks, and which of a session's tools they may see (`tools=a,b`; null: all). */
export interface McpScope {
  sessionId: string;
  /** The principal: an application token, or null for the operator. */
  tokenId: string | null;
  tools: ReadonlySet<string> | null;
}

/** Arguments nested deeper than this are refused: the journal's jsonb has a depth limit of its own. */
const MAX_ARGUMENT_DEPTH = 128;

function deeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (depth > max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The session, if it can take a call now. */
async function activeSession(rt: McpCallDeps, sessionId: string) {
  const session = await mcpSession(rt.sql, sessionId);
  if (!session) throw new BrainError("not_found");
  if (session.status !== "active") throw new BrainError("session_ended");
  return session;
}

/**
 * Starts one tool call for an MCP client, through the same path as the model's: the
 * tool_call_started record (origin `mcp`, no activation) commits first, with its worker job, its
 * deadline backstop and, for a task, the task row, in one transaction through the journal writer;
 * then the call is sent to a host connection of this process if one serves the session, or left
 * `pending` for whichever process holds one. Never before the commit: intent before effect.
 * Returns the call's sequence.
 */
export async function startMcpCall(
  rt: McpCallDeps,
  scope: McpScope,
  tool: string,
  input: Record<string, unknown>,
  task: NewMcpTask | null,
): Promise<number> {
  const session = await activeSession(rt, scope.sessionId);
  const placements = session.tools as ToolPlacement[];
  if (!mcpTools(placements, scope.tools).some((t) => t.name === tool)) {
    throw new BrainError("invalid_request", `Unknown tool: ${JSON.stringify(tool).slice(0, 200)}`);
  }
  if (deeperThan(input, MAX_ARGUMENT_DEPTH)) {
    throw new BrainError("invalid_request", `The arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels.`);
  }
  const bad = findUnstorable(input, "$.arguments");
  if (bad) throw new BrainError("unstorable_text", `${bad} holds ${UNSTORABLE_TEXT}.`);
  const routed = {
    id: scope.sessionId,
    hostId: session.hostId,
    namedHosts: await sessionNamedHosts(rt.sql, scope.sessionId),
    tools: placements,
  };
  const origin = task
    ? { type: "mcp" as const, tokenId: scope.tokenId, task: task.id }
    : { type: "mcp" as const, tokenId: scope.tokenId };
  const callId = task?.id ?? `mcp-${randomUUID()}`;
  const room = await rt.quotas.openCallRoom(session.tokenId, 1);
  const record = rt.dispatch.planMcp(routed, { tool, callId, input, origin }, session.deadline, room);
  const owner = { id: scope.sessionId, tokenId: session.tokenId };
  let op = withWorkerJobs(rt.boss, owner, [record], appendRecords(scope.sessionId, [record]));
  const deadline = record.call?.deadlineAt;
  if (deadline != null) op = rt.deadlineJobs.wrap(op, [deadline]);
  if (task) op = withMcpTask(scope.sessionId, task, op);
  const result = await rt.writer.submit(op);
  const written = result.records[0];
  // The session ended (or was deleted) between the read above and the append.
  if (!written) throw new BrainError((await mcpSession(rt.sql, scope.sessionId)) ? "session_ended" : "not_found");
  await rt.dispatch.afterCommit(scope.sessionId, result.records, [record]);
  return written.seq;
}

/** Brain's call cancel for tasks/cancel: a conditional terminal write; false when it had ended. */
export async function cancelMcpCall(rt: Pick<Services, "writer">, sessionId: string, seq: number): Promise<boolean> {
  const ended = await rt.writer.submit(
    endCalls({ sessionId, seqs: [seq] }, { status: "cancelled", cause: "mcp_cancel" }),
  );
  return ended.length > 0;
}

/**
 * Resolves with a call's answer once the journal has it, on whichever server wrote it: commits
 * reach this process through its own writer or LISTEN/NOTIFY, and each observation of the
 * session makes it look again. Rejects when `signal` aborts (the client left) or the server shuts
 * down (`not_ready`: the call goes on; ask another server).
 */
export function waitForAnswer(
  rt: Pick<Services, "sql" | "bus" | "closing">,
  sessionId: string,
  seq: number,
  signal: AbortSignal,
): Promise<CallAnswer> {
  return waitOnSession<CallAnswer>(rt, {
    sessionId,
    wakeOn: Touch.observation | Touch.ended,
    lookFirst: true,
    look: async () => {
      const state = await mcpCallState(rt.sql, sessionId, seq);
      if (!state) throw new BrainError("not_found", "The session was deleted.");
      return state.answer ?? undefined;
    },
    shutdown: () => new BrainError("not_ready", "The server is shutting down; the call goes on. Ask another server."),
    also: (_settle, fail) => {
      const onAbort = () => fail(signal.reason ?? new Error("aborted"));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      return () => signal.removeEventListener("abort", onAbort);
    },
  });
}

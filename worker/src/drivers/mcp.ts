/**
 * Runs a tool of an MCP Environment: `tools/call` on the remote MCP server the placement names,
 * claimed at most once like every worker call. Progress notifications are journaled as `progress`
 * events; the result becomes the outcome (see outcomeOfResult); Brain's cancellation and deadline
 * abort the request, which sends MCP `notifications/cancelled`.
 *
 * A tool the server may run as a task (its `execution.taskSupport`, and the server's `tasks`
 * capability) runs as one: the task id, with the MCP session it lives in, is journaled
 * (`recordResumePoint`) before the first poll, and the call then polls `tasks/get` until the task
 * is terminal and reads `tasks/result`. If this worker dies, recovery hands the call to another
 * worker (releaseResumableCalls), which arrives here with `claimed.resume` and polls the same task:
 * the call is never sent twice, and it does not end `unknown` for the loss of a worker. Cancelling
 * or timing out a task call sends `tasks/cancel`.
 */
import { deniedOutcome } from "@aexhq/brain-core/egress";
import { checkedOutcome, inputProblem } from "@aexhq/brain-core/schemas";
import { recordResumePoint } from "@aexhq/brain-db/ops";
import { CallToolResultSchema, CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { setupFailed } from "../call-reporter.js";
import type { DriverCall } from "./driver.js";
import {
  type Answer,
  connectMcp,
  endMcpSession,
  failedRequest,
  type McpConnection,
  type McpTaskPoint,
  mcpError,
  mcpHeaders,
  outcomeOfResult,
  resumePointOf,
  waitFor,
} from "./mcp-session.js";
import { pollTask } from "./mcp-task.js";

/** How long the remote server is asked to keep a task's result when the call has no deadline. */
const DEFAULT_TASK_TTL_MS = 24 * 3600 * 1000;

export async function runMcpCall(call: DriverCall): Promise<void> {
  const { deps, claimed, placement, reporter, running, log } = call;
  const impl = placement.implementation;
  if (placement.env.type !== "mcp" || impl?.type !== "mcp") {
    await reporter.failWith(setupFailed(`unsupported runtime: ${claimed.tool} is not a tool of an MCP Environment`));
    return;
  }
  const resume = resumePointOf(claimed.resume);
  if (!resume) {
    const invalid = inputProblem(placement.inputSchema, claimed.input);
    if (invalid) {
      await reporter.failWith(invalid);
      return;
    }
  }
  const headers = await mcpHeaders(deps, claimed.sessionId, placement.env.name);
  let connection: McpConnection;
  try {
    connection = await connectMcp(impl.url, headers, running.signal, resume, {
      fetch: deps.egress.fetch,
      maxAnswerBytes: deps.maxUpstreamBytes,
    });
  } catch (error) {
    if (running.stopped) return;
    const denied = deniedOutcome(error, `The connection to MCP server ${placement.env.name}`);
    if (denied) {
      await reporter.failWith(denied);
      return;
    }
    // Nothing was sent: the tool did not run (a resumed task may still be running there).
    const message = `MCP server ${placement.env.name} could not be reached: ${(error as Error).message}`;
    await reporter.failWith(
      resume ? { status: "unknown", cause: "connection_lost", message: message.slice(0, 8192) } : mcpError(message, []),
    );
    return;
  }
  const started = Date.now();
  let keepSession = false;
  try {
    const useTask =
      resume !== null ||
      (impl.taskSupport !== "forbidden" && connection.client.getServerCapabilities()?.tasks?.requests?.tools?.call);
    let answer: Answer | null;
    if (resume) answer = await pollTask(call, connection, resume);
    else if (useTask) answer = await startTask(call, connection, impl.tool);
    else answer = await callTool(call, connection, impl.tool);
    // Stopped from outside: whoever stopped it records the end. A worker stopping or lost leaves
    // a task's MCP session to the worker that resumes it.
    keepSession = running.stopped === "shutdown" || running.stopped === "lost";
    if (running.stopped || answer === null) return;
    let { outcome } = answer;
    if (outcome.status === "ok") outcome = checkedOutcome(placement.outputSchema, outcome.value, { strip: true });
    log.debug(
      { environment: placement.env.name, ms: Date.now() - started, status: outcome.status },
      "MCP call answered",
    );
    await reporter.finishWith(outcome, outcome.status === "ok" ? answer.content : undefined);
  } finally {
    if (!keepSession) await endMcpSession(connection);
    await connection.close();
  }
}

/** Journals progress notifications in order; `drain` waits for the ones already received. */
function progressJournal(call: DriverCall, secrets: string[]) {
  let chain: Promise<unknown> = Promise.resolve();
  return {
    onprogress(p: { progress: number; total?: number | undefined; message?: string | undefined }) {
      const data: Record<string, unknown> = { progress: p.progress };
      if (p.total !== undefined) data.total = p.total;
      if (p.message !== undefined) data.message = p.message;
      const text = JSON.stringify(data);
      const clean = secrets.reduce((t, s) => t.split(s).join("[redacted]"), text);
      chain = chain.then(() => call.reporter.emit("progress", clean)).catch(() => {});
    },
    drain: () => chain,
  };
}

/** A plain `tools/call`: aborting it (cancellation, deadline) sends `notifications/cancelled`. */
async function callTool(call: DriverCall, connection: McpConnection, tool: string): Promise<Answer | null> {
  const progress = progressJournal(call, connection.secrets);
  try {
    const result = await connection.client.request(
      { method: "tools/call", params: { name: tool, arguments: call.claimed.input as Record<string, unknown> } },
      CallToolResultSchema,
      { signal: call.running.signal, onprogress: progress.onprogress, timeout: waitFor(call.claimed.deadline) },
    );
    await progress.drain();
    return outcomeOfResult(result, connection.secrets);
  } catch (error) {
    await progress.drain();
    if (call.running.stopped) return null;
    return { outcome: failedRequest(error, connection) };
  }
}

/** Task-augmented `tools/call`: the task is journaled before the first poll. */
async function startTask(call: DriverCall, connection: McpConnection, tool: string): Promise<Answer | null> {
  const { claimed, running, reporter, deps } = call;
  const ttl = claimed.deadline === null ? DEFAULT_TASK_TTL_MS : Math.max(1000, claimed.deadline - Date.now() + 60_000);
  const progress = progressJournal(call, connection.secrets);
  let point: McpTaskPoint;
  try {
    const created = await connection.client.request(
      { method: "tools/call", params: { name: tool, arguments: claimed.input as Record<string, unknown> } },
      CreateTaskResultSchema,
      { signal: running.signal, onprogress: progress.onprogress, timeout: waitFor(claimed.deadline), task: { ttl } },
    );
    point = {
      taskId: created.task.taskId,
      sessionId: connection.transport.sessionId ?? null,
      protocolVersion: connection.transport.protocolVersion ?? null,
    };
  } catch (error) {
    if (running.stopped) return null;
    return { outcome: failedRequest(error, connection) };
  }
  const ref = { sessionId: claimed.sessionId, seq: claimed.seq, connectionId: reporter.connectionId };
  const recorded = await deps.writer.submit(recordResumePoint(ref, { mcpTask: point }));
  if (recorded.seq === null) {
    // The call ended while the task was being created (cancelled, timed out): the task goes too.
    await connection.client.experimental.tasks.cancelTask(point.taskId, { timeout: 5000 }).catch(() => {});
    return null;
  }
  const answer = await pollTask(call, connection, point);
  await progress.drain();
  return answer;
}

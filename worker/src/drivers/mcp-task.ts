/**
 * Polling an MCP task to its end (`tasks/get` at the server's poll interval, then `tasks/result`),
 * for the worker that created it and for one that resumed it after that worker died. Polls that
 * fail for the network are retried (the task lives on the server, not in the connection) for up
 * to LOST_AFTER_MS; a server that no longer knows the task leaves the call `unknown`. When the call
 * ends here first (cancelled, deadline) the task is cancelled there (`tasks/cancel`); when this
 * worker stops or is declared dead the task is left alone for the next worker.
 */
import type { Outcome } from "@aexhq/brain-contracts";
import { CallToolResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { DriverCall } from "./driver.js";
import {
  type Answer,
  failedRequest,
  type McpConnection,
  type McpTaskPoint,
  mcpError,
  outcomeOfResult,
  waitFor,
} from "./mcp-session.js";

/** Polls failing for the network this long in a row leave the call `unknown`. */
const LOST_AFTER_MS = 60_000;
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5000;
const DEFAULT_POLL_MS = 500;

export async function pollTask(
  call: DriverCall,
  connection: McpConnection,
  point: McpTaskPoint,
): Promise<Answer | null> {
  const { running } = call;
  const tasks = connection.client.experimental.tasks;
  const timeout = () => Math.min(30_000, waitFor(call.claimed.deadline));
  let failingSince: number | null = null;
  try {
    while (!running.stopped) {
      let status: Awaited<ReturnType<typeof tasks.getTask>>;
      try {
        status = await perRequest(running.signal, (signal) =>
          tasks.getTask(point.taskId, { signal, timeout: timeout() }),
        );
        failingSince = null;
      } catch (error) {
        if (running.stopped) break;
        if (error instanceof McpError && error.code !== -32000 && error.code !== -32001) {
          return { outcome: lost(`The MCP server no longer answers for task ${point.taskId}: ${error.message}`) };
        }
        failingSince ??= Date.now();
        if (Date.now() - failingSince > LOST_AFTER_MS) return { outcome: failedRequest(error, connection) };
        await sleep(1000, running.signal);
        continue;
      }
      switch (status.status) {
        case "completed":
        case "failed":
          return await taskResult(call, connection, point, status.statusMessage);
        case "cancelled":
          return { outcome: mcpError(`The MCP server cancelled task ${point.taskId}.`, connection.secrets) };
        case "input_required":
          // Brain's MCP client offers no elicitation or sampling: nobody can answer the task.
          await tasks.cancelTask(point.taskId, { timeout: 5000 }).catch(() => {});
          return { outcome: mcpError(`Task ${point.taskId} asks for input, which Brain cannot give.`, []) };
        default: {
          const every = Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, status.pollInterval ?? DEFAULT_POLL_MS));
          await sleep(every, running.signal);
        }
      }
    }
    return null;
  } finally {
    if (running.stopped === "ended" || running.stopped === "deadline") {
      // The call ended here (cancelled, deadline, session ended): the work there stops too.
      await tasks.cancelTask(point.taskId, { timeout: 5000 }).catch(() => {});
    }
  }
}

async function taskResult(
  call: DriverCall,
  connection: McpConnection,
  point: McpTaskPoint,
  statusMessage: string | undefined,
): Promise<Answer | null> {
  try {
    const result = await perRequest(call.running.signal, (signal) =>
      connection.client.experimental.tasks.getTaskResult(point.taskId, CallToolResultSchema, {
        signal,
        timeout: 30_000,
      }),
    );
    return outcomeOfResult(result, connection.secrets);
  } catch (error) {
    if (call.running.stopped) return null;
    const why = statusMessage ? `${statusMessage} (${(error as Error).message})` : (error as Error).message;
    return { outcome: mcpError(`MCP task ${point.taskId} failed: ${why}`, connection.secrets) };
  }
}

function lost(message: string): Outcome {
  return { status: "unknown", cause: "connection_lost", message: message.slice(0, 8192) };
}

/**
 * Runs one request with a signal of its own, aborted with the call's. The MCP SDK adds an abort
 * listener to every request's signal and never removes it: polling a long task with the call's
 * signal would pile up one listener per poll for the task's lifetime (and Node's
 * MaxListenersExceededWarning after ten).
 */
async function perRequest<T>(parent: AbortSignal, request: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const abort = () => controller.abort(parent.reason);
  if (parent.aborted) abort();
  else parent.addEventListener("abort", abort, { once: true });
  try {
    return await request(controller.signal);
  } finally {
    parent.removeEventListener("abort", abort);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

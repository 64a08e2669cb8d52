import type { IncomingMessage, ServerResponse } from "node:http";
import { BrainError, MAX_BODY_BYTES } from "../contracts.js";
import { isPlacedTool, type PlacedTool, runtimeOf, type ToolRuntime } from "../tool.js";
import { HttpToolCall } from "./http-call.js";
import { answer, answerError, readInvocation } from "./invocation-request.js";
import { InvocationVerifier, type VerifyOptions } from "./verify.js";

export interface ToolHandlerOptions extends VerifyOptions {
  /** The largest invocation body accepted (default 1 MiB); larger ones are answered 413. */
  maxBodyBytes?: number;
}

/** A Node `http` request listener; mount it at the URL the tools are placed at. */
export type ToolRequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Serves tools over HTTP with the Application tool extension: Brain POSTs an invocation, the
 * handler runs the tool placed by its factory (`lookup({ prefix: "customer:" })`: its options are
 * the application's) and reports through the call's callbacks; the request is answered once the
 * handler has returned and Brain has acknowledged what it sent. Place the tools in sessions with
 * `lookup({ env: hostEnv({ name, url }), ...options })`.
 *
 * Only Brain's invocations run: each carries Brain's signature for this handler's URL, checked
 * against Brain's keys (`brainUrl`, default BRAIN_URL, or `keys`); see VerifyOptions.
 *
 * Answers: 200 `{ finished }` after a run; 401 (`unauthorized`) for an invocation Brain did not
 * sign for this handler; 400 / 413 / 415 with a Brain error body for a request that is not an
 * invocation; 404 (`not_found`) for a tool this handler does not serve.
 */
export function toolHandler(tools: readonly PlacedTool[], options: ToolHandlerOptions = {}): ToolRequestListener {
  const served = toolRegistry(tools);
  const maxBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const verifier = new InvocationVerifier(options);
  return (req, res) => {
    serve(served, maxBytes, verifier, req, res).catch((err) => {
      answerError(res, err instanceof BrainError ? err : new BrainError("internal_error"));
    });
  };
}

async function serve(
  served: Map<string, ToolRuntime>,
  maxBytes: number,
  verifier: InvocationVerifier,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const invocation = await readInvocation(req, maxBytes, verifier);
  const tool = served.get(invocation.tool);
  if (!tool) throw new BrainError("not_found", `No tool named ${JSON.stringify(invocation.tool)} is served here.`);
  const call = new HttpToolCall(invocation, tool);
  // Brain closes the request when the call stops (deadline, cancellation, shutdown).
  res.on("close", () => {
    if (!res.writableEnded) {
      call.end(new BrainError("request_ended", "Brain closed the HTTP tool request before the handler answered."));
    }
  });
  await call.run();
  call.end();
  answer(res, 200, { finished: call.finished });
}

/** The tools by name: each made by a tool factory with a run function, names unique. */
function toolRegistry(tools: readonly PlacedTool[]): Map<string, ToolRuntime> {
  const served = new Map<string, ToolRuntime>();
  for (const placed of tools) {
    if (!isPlacedTool(placed)) {
      throw new BrainError("invalid_tool", "toolHandler takes placed tools: call the tool factory, e.g. lookup().");
    }
    if (served.has(placed.name)) {
      throw new BrainError("duplicate_tool", `Two tools served here are named ${JSON.stringify(placed.name)}.`);
    }
    served.set(placed.name, runtimeOf(placed));
  }
  return served;
}

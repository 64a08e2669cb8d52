/**
 * The Application tool extension: Brain POSTs an invocation to the application's URL and the
 * handler reports on the call through callbacks to a live Brain server (result / finish frames,
 * each acknowledged after its commit), authorised by a token naming this call on this worker's
 * connection. The request is the call's lifetime: when the handler answers, a call it left open
 * ends `tool_unfinished`; a non-2xx answer or an unreachable URL is `http_error`. The deadline,
 * the call's end elsewhere and shutdown close the request.
 */
import {
  errorOutcome,
  HTTP_TOOL_PROTOCOL,
  type HttpToolInvocation,
  INVOCATION_SIGNATURE_HEADER,
} from "@aexhq/brain-contracts";
import { callbackToken } from "@aexhq/brain-db/secrets";
import { setupFailed } from "../call-reporter.js";
import type { RunningCall } from "../running-calls.js";
import { callbackServerUrl } from "./callback-server.js";
import type { DriverCall } from "./driver.js";
import { answerError, BODY_EXCERPT_BYTES, type PostAnswer, postJson, unreachable } from "./http-post.js";

/** After the call ended elsewhere (its finish callback, say), the handler's moment to answer. */
const ANSWER_GRACE_MS = 1000;

export async function runToolInvocation({ deps, claimed, placement, reporter, running }: DriverCall, url: string) {
  const server = await callbackServerUrl(deps.sql, running);
  // Stopped from outside while it waited (deadline, ended elsewhere, shutdown): nothing to report.
  if (running.stopped) return;
  if (server === null) {
    await reporter.failWith(
      setupFailed("No live Brain server has announced a URL for the tool's callbacks (BRAIN_PUBLIC_URL)."),
    );
    return;
  }
  const call = { sessionId: claimed.sessionId, seq: claimed.seq };
  const invocation: HttpToolInvocation = {
    protocol: HTTP_TOOL_PROTOCOL,
    tool: claimed.tool,
    sessionId: call.sessionId,
    sequence: call.seq,
    input: claimed.input as HttpToolInvocation["input"],
    options: placement.options ?? null,
    deadline: claimed.deadline,
    callback: {
      url: `${server}/v1/calls/${call.sessionId}/${call.seq}/frames`,
      token: callbackToken(deps.secrets, "frames", { ...call, deadline: claimed.deadline }, deps.connectionId()),
    },
  };
  const lifetime = requestLifetime(running);
  let answer: PostAnswer;
  try {
    // Signed for this URL: the handler can tell Brain's invocations from anyone else's.
    const body = JSON.stringify(invocation);
    const headers = { [INVOCATION_SIGNATURE_HEADER]: deps.signer.sign(body, url) };
    answer = await postJson(deps.egress, url, body, { signal: lifetime.signal, maxBytes: BODY_EXCERPT_BYTES, headers });
  } catch (error) {
    if (!running.stopped) await reporter.failWith(unreachable(error));
    return;
  } finally {
    lifetime.dispose();
  }
  // Ended elsewhere (finished through a callback, cancelled, timed out) or shutting down.
  if (running.stopped) return;
  if (answer.status < 200 || answer.status > 299) {
    await reporter.failWith(answerError(`The tool's URL answered HTTP ${answer.status}`, answer));
    return;
  }
  // Writes nothing when the handler finished the call: every transition is conditional on it.
  await reporter.failWith(
    errorOutcome("tool_unfinished", "The HTTP tool answered its request without finishing the call."),
  );
}

/**
 * The request's signal: aborted when the call is stopped, except that after the call ended
 * elsewhere the handler gets ANSWER_GRACE_MS to answer (it usually is answering its own finish).
 */
function requestLifetime(running: RunningCall): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const onStop = () => {
    const abort = () => controller.abort(running.signal.reason);
    if (running.stopped === "ended") timer = setTimeout(abort, ANSWER_GRACE_MS);
    else abort();
  };
  if (running.signal.aborted) onStop();
  else running.signal.addEventListener("abort", onStop, { once: true });
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(timer);
      running.signal.removeEventListener("abort", onStop);
    },
  };
}

/**
 * Runs a descriptor tool in its HTTP Environment: the Environment is set up before its first
 * invocation (once, however many calls arrive together), then the placement's descriptor is
 * interpreted with the call's input. Every tool bound to one Environment uses its configuration
 * (base URL, headers): the binding's authority, never the tool's. A successful answer is checked
 * against the tool's output schema, extra fields stripped as zod's parse would (and the input
 * against its input schema first: no SDK runs these tools); every failure is the ordinary error
 * path, never retried.
 */

import { invokeInEnvironment } from "@aexhq/brain-core/environments";
import { checkedOutcome, inputProblem } from "@aexhq/brain-core/schemas";
import type { ClaimedWorkerCall } from "@aexhq/brain-db/ops";
import { callbackToken } from "@aexhq/brain-db/secrets";
import { setupFailed } from "../call-reporter.js";
import { callbackServerUrl } from "./callback-server.js";
import type { DriverCall } from "./driver.js";

/**
 * How the service behind an Environment that grants `model` reaches the session's model for this
 * call: a live server's model route and a token naming the call as this worker claimed it (only
 * sent when the Environment's grants include it).
 */
async function modelGrant(
  deps: DriverCall["deps"],
  claimed: ClaimedWorkerCall,
  connectionId: string,
  running: DriverCall["running"],
) {
  const server = await callbackServerUrl(deps.sql, running);
  if (server === null) return null;
  const call = { sessionId: claimed.sessionId, seq: claimed.seq, deadline: claimed.deadline };
  return {
    url: `${server}/v1/calls/${claimed.sessionId}/${claimed.seq}/model`,
    token: callbackToken(deps.secrets, "model", call, connectionId),
  };
}

export async function runHttpEnvironmentCall({ deps, claimed, placement, reporter, running, log }: DriverCall) {
  if (placement.env.type !== "http" || placement.implementation?.type !== "descriptor") {
    await reporter.failWith(
      setupFailed(`unsupported runtime: ${claimed.tool} is not a descriptor in an HTTP Environment`),
    );
    return;
  }
  const invalid = inputProblem(placement.inputSchema, claimed.input);
  if (invalid) {
    await reporter.failWith(invalid);
    return;
  }
  const started = Date.now();
  let outcome = await invokeInEnvironment(deps, {
    sessionId: claimed.sessionId,
    environment: placement.env.name,
    descriptor: placement.implementation.descriptor,
    input: claimed.input,
    signal: running.signal,
    // Asked for only when the Environment grants `model`: it may wait for a server to beat.
    modelGrant: () => modelGrant(deps, claimed, reporter.connectionId, running),
    // A result's only bound is the activation's budget; a body past it cannot be admitted.
    maxBytes: deps.maxEmittedBytes,
  });
  // Stopped from outside (deadline, ended elsewhere, shutdown): whoever stopped it records the end.
  if (running.stopped) return;
  if (outcome.status === "error" && outcome.error.code === "result_too_large") {
    await reporter.exceedsBudget(deps.maxEmittedBytes + 1);
    return;
  }
  if (outcome.status === "ok") outcome = checkedOutcome(placement.outputSchema, outcome.value, { strip: true });
  log.debug(
    { environment: placement.env.name, ms: Date.now() - started, status: outcome.status },
    "HTTP Environment call answered",
  );
  if (outcome.status === "ok") await reporter.finish(JSON.stringify(outcome));
  else await reporter.failWith(outcome);
}

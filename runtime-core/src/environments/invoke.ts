/**
 * One invocation of a descriptor in an HTTP Environment: what a worker does for a placed tool and
 * what ctx.environments.call does for a tool that asks. The Environment's configuration (base URL,
 * headers: its authority) applies to every tool bound to it; the descriptor only says what to ask.
 */
import type { Outcome } from "@aexhq/brain-contracts";
import { parseDescriptor } from "./descriptor.js";
import { sendHttpCall } from "./http-client.js";
import { buildHttpCall } from "./http-request.js";
import { redact } from "./redact.js";
import { type EnvironmentDeps, readyEnvironment } from "./setup.js";

export interface Invocation {
  sessionId: string;
  /** The Environment's name in the session. */
  environment: string;
  /** The opaque descriptor of the placement (or of the ctx.environments.call). */
  descriptor: unknown;
  input: unknown;
  /** Stops the setup and the request (deadline, call ended, shutdown). */
  signal: AbortSignal;
  /** The largest successful body accepted (default MAX_FRAME_BYTES). */
  maxBytes?: number;
  /**
   * Where and how this call may reach the session's model; asked for and sent (as
   * `brain-model-url` and `brain-call-token`) only when the Environment's grants include `model`.
   */
  modelGrant?: () => Promise<{ url: string; token: string } | null>;
}

/**
 * The invocation's outcome: the answer's value (not yet checked against any output schema), or an
 * error outcome (`setup_failed`, `invalid_input`, `http_error`, `egress_denied`, `result_too_large`). Nothing the
 * Environment answers carries its header values.
 */
export async function invokeInEnvironment(deps: EnvironmentDeps, invocation: Invocation): Promise<Outcome> {
  const parsed = parseDescriptor(invocation.descriptor);
  if (!parsed.ok) return parsed.outcome;
  const ready = await readyEnvironment(deps, invocation.sessionId, invocation.environment, invocation.signal);
  if (!ready.ok) return ready.outcome;
  const { env } = ready;
  const grant = env.row.config.grants?.model === true ? ((await invocation.modelGrant?.()) ?? null) : null;
  const headers = grant
    ? { ...env.headers, "brain-model-url": grant.url, "brain-call-token": grant.token }
    : env.headers;
  const built = buildHttpCall({ baseUrl: env.row.config.baseUrl, headers }, parsed.descriptor, invocation.input);
  if (!built.ok) return built.outcome;
  const outcome = await sendHttpCall(built.call, {
    baseUrl: env.row.config.baseUrl,
    signal: invocation.signal,
    egress: deps.egress,
    ...(invocation.maxBytes === undefined ? {} : { maxBytes: invocation.maxBytes }),
  });
  // The call token is a credential too (for this call only): it never comes back either.
  return redact(outcome, grant ? [...env.secrets, grant.token] : env.secrets);
}

/**
 * An Environment's setup request: run once before its first invocation, however many invocations
 * arrive together (an advisory lock per Environment, see attemptEnvironmentSetup), then `ready`, or
 * `failed` with the reason. A failed setup makes every invocation end `setup_failed`, without
 * retry; only an explicit setup (ctx.environments.setup) or an update runs it again.
 */
import { errorOutcome, type Outcome } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import {
  attemptEnvironmentSetup,
  type EnvironmentRow,
  readEnvironment,
  type SetupVerdict,
  type StoredEnvironment,
} from "@aexhq/brain-db/ops";
import type { SecretBox } from "@aexhq/brain-db/secrets";
import type { Egress } from "../egress/guard.js";
import { sendHttpCall } from "./http-client.js";
import { joinBase } from "./http-request.js";
import { type LoadedEnvironment, openEnvironment } from "./loaded.js";
import { redact } from "./redact.js";

/** A setup request gets this long, whatever its caller's deadline. */
export const SETUP_TIMEOUT_MS = 30_000;

export interface EnvironmentDeps {
  sql: Sql;
  secrets: SecretBox;
  /** Every request to the Environment goes through it. */
  egress: Pick<Egress, "exchange">;
}

export type Readiness = { ok: true; env: LoadedEnvironment } | { ok: false; outcome: Outcome };

/**
 * The Environment, ready for an invocation: set up first if it is new. Not ready is the ordinary
 * error path: `setup_failed` (missing Environment, failed setup, unreadable headers).
 */
export async function readyEnvironment(
  deps: EnvironmentDeps,
  sessionId: string,
  name: string,
  signal: AbortSignal,
): Promise<Readiness> {
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    const stored = await readEnvironment(deps.sql, sessionId, name);
    if (!stored) return notReady(`the Environment ${JSON.stringify(name)} was not found`);
    if (stored.row.status === "ready") return open(deps, sessionId, stored);
    if (stored.row.status === "failed") return notReady(failedMessage(stored.row));
    const attempt = await attemptEnvironmentSetup(deps.sql, sessionId, name, false, (env) =>
      performSetup(deps, sessionId, env, signal),
    );
    if (attempt.kind === "missing") return notReady(`the Environment ${JSON.stringify(name)} was not found`);
    if (attempt.kind === "done" && attempt.row.status === "ready") continue;
    if (attempt.kind === "done" && attempt.row.status === "failed") return notReady(failedMessage(attempt.row));
    // Someone else is setting it up (or it changed under us): look again shortly.
    if (!(await pause(wait, signal))) return notReady("the call was stopped before its Environment was ready");
  }
}

/**
 * ctx.environments.setup: runs the setup now, whatever its status (after a setup already running
 * finished). Null when there is no such Environment; "stopped" when the caller stopped waiting.
 */
export async function setupNow(
  deps: EnvironmentDeps,
  sessionId: string,
  name: string,
  signal: AbortSignal,
): Promise<EnvironmentRow | null | "stopped"> {
  for (let wait = 10; ; wait = Math.min(wait * 2, 250)) {
    const attempt = await attemptEnvironmentSetup(deps.sql, sessionId, name, true, (env) =>
      performSetup(deps, sessionId, env, signal),
    );
    if (attempt.kind === "missing") return null;
    if (attempt.kind === "done") return attempt.row;
    if (!(await pause(wait, signal))) return "stopped";
  }
}

/** Sends the setup request; null when the caller stopped waiting (nothing is recorded then). */
async function performSetup(
  deps: EnvironmentDeps,
  sessionId: string,
  stored: StoredEnvironment,
  signal: AbortSignal,
): Promise<SetupVerdict> {
  const setup = stored.row.config.setup;
  if (!setup) return { ok: true };
  let env: LoadedEnvironment;
  try {
    env = openEnvironment(deps.secrets, sessionId, stored);
  } catch (error) {
    return { ok: false, error: `its headers could not be opened: ${(error as Error).message}` };
  }
  const url = joinBase(env.row.config.baseUrl, setup.path);
  if (!url) return { ok: false, error: `the setup path ${setup.path} leaves the base URL` };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(env.headers)) headers[k.toLowerCase()] = v;
  headers.accept ??= "application/json";
  let body: string | undefined;
  if (setup.body !== undefined) {
    body = JSON.stringify(setup.body);
    headers["content-type"] = "application/json";
  }
  const limited = AbortSignal.any([signal, AbortSignal.timeout(SETUP_TIMEOUT_MS)]);
  const outcome = await sendHttpCall(
    { method: setup.method, url, headers, body },
    { baseUrl: env.row.config.baseUrl, signal: limited, egress: deps.egress },
  );
  if (signal.aborted) return null;
  if (outcome.status === "ok" || (outcome.status === "error" && outcome.error.code === "result_too_large")) {
    // The setup succeeded; what it answered is not kept.
    return { ok: true };
  }
  return { ok: false, error: redact(describe(outcome), env.secrets) };
}

function describe(outcome: Outcome): string {
  if (outcome.status !== "error") return `the setup request ended ${outcome.status}`;
  const details = outcome.error.details as { body?: unknown } | undefined;
  const body = typeof details?.body === "string" && details.body !== "" ? `: ${details.body.slice(0, 512)}` : "";
  return `${outcome.error.message}${body}`;
}

function failedMessage(row: EnvironmentRow): string {
  return `the Environment ${JSON.stringify(row.name)} failed its setup: ${row.setupError ?? "unknown reason"}`;
}

function notReady(message: string): Readiness {
  return { ok: false, outcome: errorOutcome("setup_failed", message.slice(0, 8192)) };
}

function open(deps: EnvironmentDeps, sessionId: string, stored: StoredEnvironment): Readiness {
  try {
    return { ok: true, env: openEnvironment(deps.secrets, sessionId, stored) };
  } catch (error) {
    return notReady(
      `the headers of ${JSON.stringify(stored.row.name)} could not be opened: ${(error as Error).message}`,
    );
  }
}

/** Waits `ms`; false if the signal aborted first. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

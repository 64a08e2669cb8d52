/**
 * The configuration side of ctx.environments: list, get, create, update, delete. Each change is
 * made in the same transaction as its journal record, while the call is held open.
 */

import { isDeepStrictEqual } from "node:util";
import {
  BrainError,
  EnvironmentPatchSchema,
  type EnvironmentSpec,
  EnvironmentSpecSchema,
  type EnvironmentView,
  issuesText,
} from "@aexhq/brain-contracts";
import { openEnvironment } from "@aexhq/brain-core/environments";
import {
  deleteEnvironment,
  type EnvironmentConfig,
  environmentSecret,
  insertEnvironment,
  listEnvironments,
  lockEnvironment,
  MAX_SESSION_ENVIRONMENTS,
  readEnvironment,
  replaceEnvironment,
  secretAad,
} from "@aexhq/brain-db/ops";
import type { Sealed } from "@aexhq/brain-db/secrets";
import type { z } from "zod";
import { denied } from "../egress/targets.js";
import type { ToolRequestAnswer } from "../hosts/link.js";
import type { Services } from "../services.js";
import type { Grant } from "./authorize.js";
import { failed, type HostCall, journal, journaledError, OK, type OperationRequest, recordPayload } from "./journal.js";
import { environmentView, fitsAck } from "./views.js";

type ManageDeps = Pick<Services, "sql" | "writer" | "secrets" | "egress">;

type Named = OperationRequest & { name: string };

/** Answers the operation, or throws the refusal it journaled (nothing is written for an ended call). */
function settle<T>(seq: number | null, refused: string | null, error: BrainError | null, value: T): ToolRequestAnswer {
  if (refused === "call_ended") throw new BrainError("call_ended");
  if (error) throw journaledError(error);
  return { sequence: seq, value };
}

export async function listOperation(rt: ManageDeps, call: HostCall, req: OperationRequest, grant: Grant) {
  let views: EnvironmentView[] = [];
  let error: BrainError | null = null;
  const r = await journal(rt, call, {
    requireOpenCall: true,
    effect: (tx) => listEnvironments(tx, call.sessionId),
    payload: (rows) => {
      views = (rows ?? []).filter((row) => !grant.names || grant.names.has(row.name)).map(environmentView);
      if (!fitsAck(views)) error = new BrainError("frame_too_large", "The list of environments exceeds a frame.");
      return recordPayload(call, req, error ? failed(error) : OK, { count: views.length });
    },
  });
  return settle(r.seq, r.refused, error, views);
}

export async function getOperation(rt: ManageDeps, call: HostCall, req: Named) {
  const r = await journal(rt, call, {
    requireOpenCall: true,
    effect: (tx) => readEnvironment(tx, call.sessionId, req.name),
    payload: (env) => recordPayload(call, req, env ? OK : failed(notFound(req.name))),
  });
  return settle(r.seq, r.refused, r.result ? null : notFound(req.name), r.result && environmentView(r.result.row));
}

export async function createOperation(
  rt: ManageDeps,
  call: HostCall,
  req: Named,
  params: unknown,
  bindings: { name: string; type: string }[],
  grant: Grant,
) {
  const spec = parse(EnvironmentSpecSchema, { type: "http", ...(isObject(params) ? params : {}), name: req.name });
  if (spec.grants?.model) requireGrantPermission(grant);
  const other = bindings.find((b) => b.name === spec.name && b.type !== "http");
  if (other) {
    throw new BrainError("environment_exists", `The name ${JSON.stringify(spec.name)} is a ${other.type} environment.`);
  }
  await judgeTarget(rt, spec.baseUrl);
  const headers = sealHeaders(rt, call.sessionId, spec.name, spec.headers ?? {});
  const r = await journal(rt, call, {
    requireOpenCall: true,
    effect: async (tx) => {
      const created = await insertEnvironment(tx, call.sessionId, { name: spec.name, config: configOf(spec), headers });
      return { created, env: created === "created" ? await readEnvironment(tx, call.sessionId, spec.name) : null };
    },
    payload: (res) => recordPayload(call, req, res?.env ? OK : failed(createRefusal(spec.name, res?.created))),
  });
  const env = r.result?.env;
  return settle(
    r.seq,
    r.refused,
    env ? null : createRefusal(spec.name, r.result?.created),
    env && environmentView(env.row),
  );
}

export async function updateOperation(rt: ManageDeps, call: HostCall, req: Named, params: unknown, grant: Grant) {
  const patch = parse(EnvironmentPatchSchema, params ?? {});
  if (patch.grants?.model === true) requireGrantPermission(grant);
  if (patch.baseUrl !== undefined) await judgeTarget(rt, patch.baseUrl);
  const r = await journal(rt, call, {
    requireOpenCall: true,
    effect: async (tx) => {
      const stored = await lockEnvironment(tx, call.sessionId, req.name);
      if (!stored) return null;
      const { config, headers: kept } = patched(stored.row.config, patch);
      let headers: Sealed | null | undefined = kept;
      let changed = !isDeepStrictEqual(config, stored.row.config) || kept === null;
      if (patch.headers !== undefined) {
        headers = sealHeaders(rt, call.sessionId, req.name, patch.headers);
        changed ||= !sameHeaders(rt, call.sessionId, stored, patch.headers);
      }
      // An unchanged Environment keeps its status: nothing needs setting up again.
      if (changed) await replaceEnvironment(tx, call.sessionId, req.name, config, headers);
      return (await readEnvironment(tx, call.sessionId, req.name))?.row ?? null;
    },
    payload: (row) => recordPayload(call, req, row ? OK : failed(notFound(req.name))),
  });
  return settle(r.seq, r.refused, r.result ? null : notFound(req.name), r.result && environmentView(r.result));
}

/**
 * The configuration after a patch. An Environment's headers and grants are its authority at its
 * origin: moved to another origin, it keeps neither unless the patch gives them again (`headers`
 * null: the sealed headers are dropped; undefined: kept as they are).
 */
function patched(old: EnvironmentConfig, patch: z.output<typeof EnvironmentPatchSchema>) {
  const moved = patch.baseUrl !== undefined && new URL(patch.baseUrl).origin !== new URL(old.baseUrl).origin;
  const config: EnvironmentConfig = {
    ...old,
    baseUrl: patch.baseUrl ?? old.baseUrl,
    headerNames: patch.headers ? Object.keys(patch.headers) : moved ? [] : old.headerNames,
  };
  if (patch.setup !== undefined) config.setup = patch.setup;
  if (patch.grants !== undefined) config.grants = patch.grants;
  else if (moved) delete config.grants;
  const dropHeaders = moved && patch.headers === undefined && old.headerNames.length > 0;
  return { config, headers: dropHeaders ? null : undefined };
}

/** Grants change only where the session's environmentControl names the `grant` permission. */
function requireGrantPermission(grant: Grant): void {
  if (!grant.mayGrant) {
    throw new BrainError(
      "environment_denied",
      "This session may not change an Environment's grants: environmentControl does not name grant.",
    );
  }
}

export async function deleteOperation(rt: ManageDeps, call: HostCall, req: Named) {
  const r = await journal(rt, call, {
    requireOpenCall: true,
    effect: (tx) => deleteEnvironment(tx, call.sessionId, req.name),
    payload: (deleted) => recordPayload(call, req, deleted ? OK : failed(notFound(req.name))),
  });
  return settle(r.seq, r.refused, r.result ? null : notFound(req.name), null);
}

/** An Environment may not point where the egress guard would refuse to send: refused before anything is stored. */
async function judgeTarget(rt: ManageDeps, baseUrl: string): Promise<void> {
  const refusal = await rt.egress.preflight(baseUrl);
  if (refusal) throw denied("baseUrl", refusal);
}

export function notFound(name: string): BrainError {
  return new BrainError("environment_not_found", `The session has no environment ${JSON.stringify(name)}.`);
}

function createRefusal(name: string, created: string | undefined): BrainError {
  if (created === "full") {
    return new BrainError("invalid_request", `A session holds at most ${MAX_SESSION_ENVIRONMENTS} environments.`);
  }
  return new BrainError("environment_exists", `The session already has an environment ${JSON.stringify(name)}.`);
}

/** The public configuration, as session creation stores it. */
function configOf(spec: EnvironmentSpec): EnvironmentConfig {
  const { type: _type, name: _name, headers, ...config } = spec;
  return { ...config, headerNames: Object.keys(headers ?? {}) };
}

function sealHeaders(rt: ManageDeps, sessionId: string, name: string, headers: Record<string, string>): Sealed | null {
  if (Object.keys(headers).length === 0) return null;
  return rt.secrets.seal(JSON.stringify(headers), secretAad(sessionId, environmentSecret(name)));
}

function sameHeaders(
  rt: ManageDeps,
  sessionId: string,
  stored: NonNullable<Awaited<ReturnType<typeof readEnvironment>>>,
  headers: Record<string, string>,
): boolean {
  try {
    return isDeepStrictEqual(openEnvironment(rt.secrets, sessionId, stored).headers, headers);
  } catch {
    return false;
  }
}

/** Validates params; the message names paths and rules, never the values (headers are secrets). */
function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issues = issuesText(parsed.error, { root: "params" });
  throw new BrainError("invalid_request", `Invalid environment: ${issues}`.slice(0, 2048));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

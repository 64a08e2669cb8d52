import { z } from "zod";
import { BrainError } from "./contracts.js";
import {
  APPLICATION_ENV,
  type BrainEnvironment,
  type HostEnvironment,
  type HttpEnvironment,
  isBrainEnvironment,
  isHostEnvironment,
  isHttpEnvironment,
} from "./environment.js";

export type AnyEnvironment = HostEnvironment | BrainEnvironment | HttpEnvironment;

/** What a factory was called with, split into its placement and its tool options. */
export interface SplitOptions {
  /** Undefined when the factory was given no env (the tool kind decides the default). */
  env: AnyEnvironment | undefined;
  options: Record<string, unknown>;
}

/** Takes `env` out of the factory argument; it is never part of the tool's own options. */
export function splitEnv(toolName: string, argument: unknown): SplitOptions {
  if (argument === undefined) return { env: undefined, options: {} };
  if (typeof argument !== "object" || argument === null || Array.isArray(argument)) {
    throw new BrainError("invalid_options", `${toolName}(options): options must be an object.`);
  }
  const { env, ...options } = argument as Record<string, unknown>;
  if (env === undefined) return { env: undefined, options };
  if (!isHostEnvironment(env) && !isBrainEnvironment(env) && !isHttpEnvironment(env)) {
    throw new BrainError(
      "invalid_options",
      `${toolName}(options): env must come from hostEnv(), http(), brainEnv() or httpEnv().`,
    );
  }
  return { env, options };
}

/**
 * Where a placed tool runs: a `run` tool in a host (the registering application by default), a
 * component in a Brain environment, a descriptor in the Environment that interprets it (no default
 * for either: the grants and configuration are the caller's decision). A descriptor placed where no
 * driver interprets it is refused by Brain when the session is created (unsupported runtime).
 */
export function placementEnv(
  toolName: string,
  env: AnyEnvironment | undefined,
  kind: "run" | "component" | "descriptor",
): AnyEnvironment {
  if (kind === "run") {
    if (env === undefined) return APPLICATION_ENV;
    if (env.type === "host") return env;
    throw new BrainError("invalid_options", `${toolName}: a tool with run belongs in a host environment (hostEnv).`);
  }
  if (kind === "component" && env?.type === "brain") return env;
  if (kind === "descriptor" && env !== undefined && env.type !== "host") return env;
  const where =
    kind === "component"
      ? `a Brain environment: ${toolName}({ env: brainEnv({ name }) })`
      : `the Environment that interprets its descriptor, e.g. ${toolName}({ env: httpEnv({ name, baseUrl }) })`;
  throw new BrainError(
    "invalid_options",
    `${toolName}: a tool with an implementation does not run in a host; place it in ${where}.`,
  );
}

/**
 * Parses factory options synchronously (a factory call returns a placement, not a promise) and
 * freezes the result. Without an options schema only an empty object is accepted.
 */
export function parseOptions(
  toolName: string,
  schema: z.ZodType | undefined,
  options: Record<string, unknown>,
): unknown {
  if (schema === undefined) {
    const keys = Object.keys(options);
    if (keys.length > 0) {
      throw new BrainError(
        "invalid_options",
        `${toolName} declares no options schema; call it with no options (got ${keys.join(", ")}).`,
      );
    }
    return Object.freeze({});
  }
  let parsed: unknown;
  try {
    const result = schema.safeParse(options);
    if (!result.success) {
      throw new BrainError("invalid_options", `${toolName}: options failed the options schema.`, result.error.issues);
    }
    parsed = result.data;
  } catch (err) {
    if (err instanceof BrainError) throw err;
    // An async refinement cannot run here: the factory is synchronous.
    const reason = err instanceof z.core.$ZodAsyncError ? "the options schema is asynchronous" : String(err);
    throw new BrainError("invalid_options", `${toolName}: options could not be parsed: ${reason}.`);
  }
  return deepFreeze(parsed);
}

/**
 * Freezes plain objects and arrays all the way down. Class instances (a database pool passed as an
 * option, say) are left as they are: freezing them would break them, and they are not data.
 */
export function deepFreeze<T>(value: T, seen = new Set<object>()): T {
  if (typeof value !== "object" || value === null || seen.has(value)) return value;
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return value;
  seen.add(value);
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child, seen);
  return value;
}

import { BrainError } from "@aexhq/brain-contracts";
import { z } from "zod";
import {
  APPLICATION_ENV,
  type BrainEnvironment,
  type HostEnvironment,
  isBrainEnvironment,
  isHostEnvironment,
} from "./environment.js";

/** What a factory was called with, split into its placement and its tool options. */
export interface SplitOptions {
  /** Undefined when the factory was given no env (the tool kind decides the default). */
  env: HostEnvironment | BrainEnvironment | undefined;
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
  if (!isHostEnvironment(env) && !isBrainEnvironment(env)) {
    throw new BrainError("invalid_options", `${toolName}(options): env must come from hostEnv() or brainEnv().`);
  }
  return { env, options };
}

/**
 * Where a placed tool runs: a `run` tool in a host (the registering application by default), an
 * implementation in a Brain environment (no default: its grants are the caller's decision).
 */
export function placementEnv(
  toolName: string,
  env: HostEnvironment | BrainEnvironment | undefined,
  kind: "run" | "implementation",
): HostEnvironment | BrainEnvironment {
  if (kind === "run") {
    if (env === undefined) return APPLICATION_ENV;
    if (env.type === "host") return env;
    throw new BrainError("invalid_options", `${toolName}: a tool with run belongs in a host environment (hostEnv).`);
  }
  if (env?.type === "brain") return env;
  throw new BrainError(
    "invalid_options",
    `${toolName}: a tool with an implementation needs a Brain environment: ${toolName}({ env: brainEnv({ name }) }).`,
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

import { createHash } from "node:crypto";
import {
  BrainEnvironmentRefSchema,
  BrainError,
  type EnvironmentRef,
  type EnvironmentSpec,
  EnvironmentSpecSchema,
  HostEnvironmentRefSchema,
} from "./contracts.js";

/** A named application-host binding: the tool runs in the process of the Brain client serving it. */
export type HostEnvironment = Extract<EnvironmentRef, { type: "host" }>;

/** Where `lookup()` places a tool when no `env` is given: the registering application itself. */
export const APPLICATION_ENV: HostEnvironment = Object.freeze({ type: "host", name: "application" });

/**
 * A named host binding, for `lookup({ env: hostEnv({ name: "app" }), ...options })`. Tools bound to
 * a named host are served by whichever processes serve it (`brain.hosts.serve({ name, tools })`),
 * in the namespace of the client's token; the client creating the session need not be one of
 * them. ("application" is every client's own host: `lookup()` with no env.) With `url`, the
 * application serves them over HTTP instead (the Application tool extension: `toolHandler` /
 * `fastifyTools` at that URL), and no host connection is needed for them.
 */
export function hostEnv(spec: { name: string; url?: string }): HostEnvironment {
  const ref = spec.url === undefined ? {} : { url: spec.url, protocol: "tool" };
  const parsed = HostEnvironmentRefSchema.safeParse({ type: "host", name: spec.name, ...ref });
  if (!parsed.success) {
    throw new BrainError(
      "invalid_options",
      `hostEnv: the name ${JSON.stringify(spec.name)} must match ^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$ (and url be an absolute http(s) URL).`,
      parsed.error.issues,
    );
  }
  return Object.freeze(parsed.data);
}

export function isHostEnvironment(value: unknown): value is HostEnvironment {
  return HostEnvironmentRefSchema.safeParse(value).success;
}

/** Brain's own runtime for component tools, with the grants its binding asks for. */
export type BrainEnvironment = Extract<EnvironmentRef, { type: "brain" }>;

/**
 * A named Brain binding for component tools: `brainEnv({ name: "reader", filesystem: { workspace:
 * "read" } })`. Every tool placed in one binding receives that binding's grants; without a
 * filesystem grant a component sees no filesystem at all. The server refuses grants outside its
 * allow-list when the session is created.
 */
export function brainEnv(spec: { name: string; filesystem?: { workspace?: "read" | "write" } }): BrainEnvironment {
  const parsed = BrainEnvironmentRefSchema.safeParse({ type: "brain", ...spec });
  if (!parsed.success) {
    throw new BrainError("invalid_options", "brainEnv: invalid environment.", parsed.error.issues);
  }
  return deepFreezeEnv(parsed.data);
}

export function isBrainEnvironment(value: unknown): value is BrainEnvironment {
  return BrainEnvironmentRefSchema.safeParse(value).success;
}

function deepFreezeEnv<T extends object>(value: T): T {
  for (const v of Object.values(value)) if (v && typeof v === "object") Object.freeze(v);
  return Object.freeze(value);
}

/** An HTTP Environment binding: descriptor tools placed in it run against its base URL. */
export type HttpEnvironment = Extract<EnvironmentRef, { type: "http" }>;

export interface HttpEnvironmentOptions {
  name: string;
  baseUrl: string;
  /** Sent with every request (an Authorization header, say): encrypted at rest, never shown again. */
  headers?: Record<string, string>;
  /** One request that must succeed before the first invocation; failures reach the tool error path. */
  setup?: { method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE"; path: string; body?: unknown };
  /**
   * `model: true`: each invocation carries `brain-model-url` and `brain-call-token`, with which the
   * service behind `baseUrl` calls the session's model for that call (its budget, its journal).
   */
  grants?: { model?: boolean };
}

const httpSpecs = new WeakMap<HttpEnvironment, EnvironmentSpec>();

/**
 * An HTTP Environment for descriptor tools: `fetchIssue({ env: httpEnv({ name: "github", baseUrl:
 * "https://api.github.com", headers: { authorization: "Bearer ..." } }), repository })`. Its
 * configuration is sent once, with the session that uses it; its headers never enter the journal.
 */
export function httpEnv(spec: HttpEnvironmentOptions): HttpEnvironment {
  const parsed = EnvironmentSpecSchema.safeParse({ type: "http", ...spec });
  if (!parsed.success) {
    throw new BrainError("invalid_options", "httpEnv: invalid environment.", parsed.error.issues);
  }
  const ref: HttpEnvironment = Object.freeze({ type: "http", name: parsed.data.name });
  httpSpecs.set(ref, Object.freeze(parsed.data));
  return ref;
}

export function isHttpEnvironment(value: unknown): value is HttpEnvironment {
  return typeof value === "object" && value !== null && httpSpecs.has(value as HttpEnvironment);
}

/** The configuration an HTTP Environment binding was made with. */
export function environmentSpecOf(env: HttpEnvironment): EnvironmentSpec | undefined {
  return httpSpecs.get(env);
}

/**
 * The v1 placement of a tool an application serves over HTTP with the plain-JSON convention: Brain
 * POSTs the input as JSON and the response body is the result. `lookup({ env: http(url) })`.
 */
export function http(spec: string | { url: string; name?: string }): HostEnvironment {
  const { url, name } = typeof spec === "string" ? { url: spec, name: undefined } : spec;
  const parsed = HostEnvironmentRefSchema.safeParse({
    type: "host",
    // One binding per URL: two URLs under one default name would be two environments with one name.
    name: name ?? `http-${createHash("sha256").update(String(url)).digest("hex").slice(0, 16)}`,
    url,
    protocol: "json",
  });
  if (!parsed.success) throw new BrainError("invalid_options", "http: invalid placement.", parsed.error.issues);
  return Object.freeze(parsed.data);
}

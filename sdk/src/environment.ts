import {
  BrainEnvironmentRefSchema,
  BrainError,
  type EnvironmentRef,
  HostEnvironmentRefSchema,
} from "@aexhq/brain-contracts";

/** A named application-host binding: the tool runs in the process of the Brain client serving it. */
export type HostEnvironment = Extract<EnvironmentRef, { type: "host" }>;

/** Where `lookup()` places a tool when no `env` is given: the registering application itself. */
export const APPLICATION_ENV: HostEnvironment = Object.freeze({ type: "host", name: "application" });

/**
 * A named host binding, for `lookup({ env: hostEnv({ name: "app" }), ...options })`. Tools bound to
 * any host name are served by the host connection of the Brain client that creates the session.
 */
export function hostEnv(spec: { name: string }): HostEnvironment {
  const parsed = HostEnvironmentRefSchema.safeParse({ type: "host", name: spec.name });
  if (!parsed.success) {
    throw new BrainError(
      "invalid_options",
      `hostEnv: the name ${JSON.stringify(spec.name)} must match ^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$.`,
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

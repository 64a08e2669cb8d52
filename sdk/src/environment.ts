import { BrainError, type EnvironmentRef, HostEnvironmentRefSchema } from "@aexhq/brain-contracts";

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

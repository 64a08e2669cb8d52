/**
 * What a session's tools may do through ctx.environments: the operations and, optionally, the
 * Environment names given at session creation (`environmentControl`). Nothing else is allowed.
 */
import { BrainError, EnvironmentControlSchema, type EnvironmentOperation } from "@aexhq/brain-contracts";

export interface Grant {
  /** The names the session may touch; null means all of them. */
  names: ReadonlySet<string> | null;
  /** Whether create and update may set an Environment's grants (the `grant` permission). */
  mayGrant: boolean;
}

/** Throws environment_denied (or invalid_request for a nameless operation that needs a name). */
export function authorize(control: unknown, operation: EnvironmentOperation, name: string | undefined): Grant {
  const parsed = control === null || control === undefined ? null : EnvironmentControlSchema.safeParse(control);
  if (!parsed?.success) {
    throw new BrainError("environment_denied", "This session was created without environmentControl.");
  }
  if (!parsed.data.operations.includes(operation)) {
    throw new BrainError("environment_denied", `This session may not ${operation} environments.`);
  }
  const names = parsed.data.environments ? new Set(parsed.data.environments) : null;
  const mayGrant = parsed.data.operations.includes("grant");
  if (operation === "list") return { names, mayGrant };
  if (name === undefined || name === "") {
    throw new BrainError("invalid_request", `${operation} needs the name of an environment.`);
  }
  if (names && !names.has(name)) {
    throw new BrainError(
      "environment_denied",
      `This session may not ${operation} the environment ${JSON.stringify(name)}.`,
    );
  }
  return { names, mayGrant };
}

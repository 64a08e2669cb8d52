import { BrainError } from "@aexhq/brain-contracts";
import type { z } from "zod";

/** Parses untrusted input with a contract schema; failures are `invalid_request` with the issues. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new BrainError(
    "invalid_request",
    undefined,
    result.error.issues.map((i) => ({ path: i.path.map(String).join("."), message: i.message, code: i.code })),
  );
}

import { BrainError, issueDetail } from "@aexhq/brain-contracts";
import type { z } from "zod";

/** Parses untrusted input with a contract schema; failures are `invalid_request` with the issues. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  let result: z.ZodSafeParseResult<z.output<S>>;
  try {
    result = schema.safeParse(value) as z.ZodSafeParseResult<z.output<S>>;
  } catch (error) {
    // Pathologically deep JSON exhausts the validator's stack: refuse it like any bad input.
    if (error instanceof RangeError) throw new BrainError("invalid_request", "The JSON is nested too deeply.");
    throw error;
  }
  if (result.success) return result.data;
  throw new BrainError("invalid_request", undefined, result.error.issues.map(issueDetail));
}

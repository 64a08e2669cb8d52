import type { z } from "zod";
import {
  errorOutcome,
  findNonJson,
  issuesForWire,
  type Outcome,
  OutcomeSchema,
  type OutcomeStatus,
  RESERVED_STATUSES,
} from "./contracts.js";
import { thrownMessage } from "./thrown.js";

const reserved = new Set<string>(RESERVED_STATUSES);

/** An object whose top-level `status` is reserved is an outcome envelope, never ordinary output. */
export function isEnvelope(value: unknown): value is { status: OutcomeStatus; [key: string]: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const status: unknown = (value as { status?: unknown }).status;
  return typeof status === "string" && reserved.has(status);
}

/**
 * Turns whatever a tool returned, emitted or finished with into the Outcome Brain records:
 * - an envelope is checked against OutcomeSchema (malformed → invalid_output); an `ok` envelope's
 *   `value` is validated like ordinary output and never inspected for another envelope; a
 *   non-success envelope bypasses output validation;
 * - anything else is ordinary output: validated by the output schema (parseAsync, so transforms
 *   apply) and then required to be plain JSON.
 * Never rejects: every failure is an `invalid_output` error outcome.
 */
export async function normalizeResult(value: unknown, output: z.ZodType | undefined): Promise<Outcome> {
  if (!isEnvelope(value)) return validateOutput(value, output);
  if (value.status === "ok") {
    const keys = Object.keys(value);
    if (!keys.includes("value") || keys.some((key) => key !== "status" && key !== "value")) {
      return errorOutcome("invalid_output", 'An ok outcome is exactly { status: "ok", value }.');
    }
    return validateOutput(value.value, output);
  }
  const parsed = OutcomeSchema.safeParse(value);
  if (!parsed.success) {
    return errorOutcome(
      "invalid_output",
      `The ${value.status} outcome envelope is malformed.`,
      issuesForWire(parsed.error),
    );
  }
  return parsed.data;
}

async function validateOutput(value: unknown, output: z.ZodType | undefined): Promise<Outcome> {
  let parsed = value;
  if (output !== undefined) {
    let result: Awaited<ReturnType<z.ZodType["safeParseAsync"]>>;
    try {
      result = await output.safeParseAsync(value);
    } catch (err) {
      return errorOutcome("invalid_output", `The output schema threw: ${thrownMessage(err)}`);
    }
    if (!result.success) {
      return errorOutcome("invalid_output", "The output failed the tool's output schema.", issuesForWire(result.error));
    }
    parsed = result.data;
  }
  const bad = findNonJson(parsed);
  if (bad !== null) {
    return errorOutcome("invalid_output", `The output is not plain JSON at ${bad}.`, { path: bad });
  }
  // A snapshot: the frame is written later (after earlier frames of the call), and the caller may
  // mutate the object in between.
  return { status: "ok", value: structuredClone(parsed) as Extract<Outcome, { status: "ok" }>["value"] };
}

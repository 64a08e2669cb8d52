/**
 * Output validation for tools whose results do not pass through the SDK (HTTP Environment
 * descriptors, v1 plain-JSON HTTP tools): the placement's advertised output JSON Schema (draft
 * 2020-12, as zod exports it) checked with Ajv. Validators are compiled once per schema text.
 */
import { errorOutcome, type Outcome } from "@aexhq/brain-contracts";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
const compiled = new Map<string, ValidateFunction | Error>();

function validatorFor(schema: Record<string, unknown>): ValidateFunction | Error {
  const key = JSON.stringify(schema);
  let v = compiled.get(key);
  if (!v) {
    try {
      v = ajv.compile(schema);
    } catch (error) {
      v = error as Error;
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, v);
  }
  return v;
}

/** The ok outcome of `value`, or `invalid_output` when it fails the tool's output schema. */
export function checkedOutcome(outputSchema: Record<string, unknown> | null, value: unknown): Outcome {
  if (outputSchema === null) return { status: "ok", value: value as never };
  const validate = validatorFor(outputSchema);
  if (validate instanceof Error) {
    return errorOutcome("invalid_output", `The tool's output schema could not be compiled: ${validate.message}`);
  }
  if (validate(value)) return { status: "ok", value: value as never };
  return errorOutcome(
    "invalid_output",
    "The result failed the tool's output schema.",
    (validate.errors ?? []).slice(0, 20).map((e) => ({ path: e.instancePath, message: e.message })),
  );
}

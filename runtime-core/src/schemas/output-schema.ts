/**
 * Output validation for tools whose results do not pass through the SDK (HTTP Environment
 * descriptors, v1 plain-JSON HTTP tools): the placement's advertised output JSON Schema (draft
 * 2020-12, as zod exports it) checked with Ajv. Validators are compiled once per schema text. The
 * input of a tool no SDK runs is checked the same way against its advertised input schema;
 * components (whose results no SDK validates either) get both checks, and their input gets the
 * schema's defaults, as zod's parse would give a host tool. Patterns run on RE2 (linear time): a
 * tenant's `^(a|a)*$` costs no more than any other pattern, on a loop every tenant shares.
 */
import { errorOutcome, type Outcome } from "@aexhq/brain-contracts";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { linearRegExp } from "./linear-regexp.js";

const options = { strict: false, allErrors: false, validateFormats: false, code: { regExp: linearRegExp } } as const;
const ajv = new Ajv2020(options);
/**
 * zod exports an ordinary z.object's output with `additionalProperties: false` because parsing
 * strips extra keys: this instance strips them too (a third-party API answers many more fields).
 */
const stripping = new Ajv2020({ ...options, removeAdditional: true });
/** Fills in JSON Schema `default`s (zod's io:"input" export carries them) as zod's parse would. */
const defaulting = new Ajv2020({ ...options, useDefaults: true });
const compiled = new Map<string, ValidateFunction | Error>();

type Mode = "check" | "strip" | "defaults";

function validatorFor(given: Record<string, unknown>, mode: Mode = "check"): ValidateFunction | Error {
  const key = `${mode}:${JSON.stringify(given)}`;
  let v = compiled.get(key);
  if (!v) {
    // MCP servers advertise draft-07 schemas (the MCP SDK's export names it in `$schema`, which
    // Ajv2020 cannot resolve); their keywords are checked as 2020-12 ones, which they mostly are.
    const { $schema, ...rest } = given;
    const schema = typeof $schema === "string" && !$schema.includes("2020-12") ? rest : given;
    try {
      v = (mode === "strip" ? stripping : mode === "defaults" ? defaulting : ajv).compile(schema);
    } catch (error) {
      v = error as Error;
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, v);
  }
  return v;
}

export interface CheckOptions {
  /**
   * Drop properties the schema closes with `additionalProperties: false` instead of failing, as
   * zod's parse of an ordinary z.object would; the value is checked (and stripped) as a copy.
   */
  strip?: boolean;
}

/** The ok outcome of `value`, or `invalid_output` when it fails the tool's output schema. */
export function checkedOutcome(
  outputSchema: Record<string, unknown> | null,
  value: unknown,
  options: CheckOptions = {},
): Outcome {
  if (outputSchema === null) return { status: "ok", value: value as never };
  const validate = validatorFor(outputSchema, options.strip ? "strip" : "check");
  if (validate instanceof Error) {
    return errorOutcome("invalid_output", `The tool's output schema could not be compiled: ${validate.message}`);
  }
  const checked = options.strip ? structuredClone(value) : value;
  if (validate(checked)) return { status: "ok", value: checked as never };
  return errorOutcome("invalid_output", "The result failed the tool's output schema.", schemaIssues(validate));
}

/**
 * Null when `input` satisfies the tool's input schema, else the `invalid_input` outcome. A schema
 * that cannot be compiled (a pattern RE2 cannot run, which session creation refuses) is
 * `invalid_input` too: the tool must not run on input nothing checked.
 */
export function inputProblem(inputSchema: Record<string, unknown>, input: unknown): Outcome | null {
  const validate = validatorFor(inputSchema);
  if (validate instanceof Error) {
    return errorOutcome("invalid_input", `The tool's input schema could not be compiled: ${validate.message}`);
  }
  if (validate(input)) return null;
  return errorOutcome("invalid_input", "The tool input failed the tool's input schema.", schemaIssues(validate));
}

export type CheckedInput = { ok: true; input: unknown } | { ok: false; outcome: Outcome };

/**
 * The input with the schema's defaults applied (on a copy), or the `invalid_input` outcome when it
 * fails the tool's input schema. A schema Ajv cannot compile is `invalid_input` too: the component
 * must not run on input nothing checked.
 */
export function checkedInput(inputSchema: Record<string, unknown>, input: unknown): CheckedInput {
  const validate = validatorFor(inputSchema, "defaults");
  if (validate instanceof Error) {
    const outcome = errorOutcome("invalid_input", `The tool's input schema could not be compiled: ${validate.message}`);
    return { ok: false, outcome };
  }
  const copy = structuredClone(input ?? null);
  if (validate(copy)) return { ok: true, input: copy };
  const details = schemaIssues(validate);
  return {
    ok: false,
    outcome: errorOutcome("invalid_input", "The tool input failed the tool's input schema.", details),
  };
}

/**
 * A JSON Schema failure (Ajv's) as an error outcome's details: at most 20 issues, each at its JSON
 * pointer. Bounded like the SDK's zod issues (issuesForWire), so a failure never spends the budget.
 */
function schemaIssues(validate: { errors?: { instancePath: string; message?: string }[] | null }) {
  return (validate.errors ?? []).slice(0, 20).map((e) => ({ path: e.instancePath, message: e.message }));
}

import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { linearRegExp } from "./linear-regexp.js";

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, code: { regExp: linearRegExp } });
const compiled = new Map<string, ValidateFunction | Error>();

/**
 * Whether `value` satisfies a tool's advertised input schema (draft 2020-12, patterns on RE2):
 * null when it does, else why not. Validators are compiled once per schema text.
 */
export function inputProblem(schema: Record<string, unknown>, value: unknown): string | null {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    try {
      validate = ajv.compile(schema);
    } catch (error) {
      validate = error as Error;
    }
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, validate);
  }
  if (validate instanceof Error) return `the tool's input schema cannot be compiled: ${validate.message}`;
  if (validate(value)) return null;
  const first = validate.errors?.[0];
  return first ? `${first.instancePath || "the input"} ${first.message ?? "is invalid"}` : "the input is invalid";
}

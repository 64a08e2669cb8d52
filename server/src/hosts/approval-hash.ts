import { createHash } from "node:crypto";
import { canonicalJson } from "../canonical-json.js";

/**
 * The hash an approval binds: SHA-256 (hex) of the call's input as canonical JSON, so it reads the
 * same from the journal, where jsonb keeps its own key order.
 */
export function inputHash(input: unknown): string {
  return createHash("sha256").update(canonicalJson(input)).digest("hex");
}

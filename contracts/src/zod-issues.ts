import type { z } from "zod";

/**
 * A schema failure as text, for error messages: `path: message` per issue, joined. An issue at the
 * root has an empty path; `root` names it instead (a configuration's, a descriptor's, …).
 */
export function issuesText(
  error: z.ZodError,
  options: { root?: string; prefix?: string; separator?: string } = {},
): string {
  const { root = "", prefix = "", separator = "; " } = options;
  return error.issues.map((i) => `${prefix}${i.path.join(".") || root}: ${i.message}`).join(separator);
}

/** One issue as the HTTP API's `invalid_request` details carry it: the path joined with dots. */
export function issueDetail(i: { path: PropertyKey[]; message: string; code: string }): {
  path: string;
  message: string;
  code: string;
} {
  return { path: i.path.map(String).join("."), message: i.message, code: i.code };
}

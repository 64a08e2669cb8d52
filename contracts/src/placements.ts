import { isDeepStrictEqual } from "node:util";
import type { ToolPlacement } from "./http.js";

/**
 * What differs between the tools a session advertised at creation and the tools offered to
 * reattach it, one line per difference; empty when they match. Names, environments and the
 * advertised input and output JSON Schemas must be identical: the model and the journal already
 * rely on those contracts.
 */
export function placementDifferences(advertised: readonly ToolPlacement[], given: readonly ToolPlacement[]): string[] {
  const out: string[] = [];
  const before = new Map(advertised.map((t) => [t.name, t]));
  const now = new Map(given.map((t) => [t.name, t]));
  for (const name of before.keys()) if (!now.has(name)) out.push(`missing tool ${JSON.stringify(name)}`);
  for (const name of now.keys()) if (!before.has(name)) out.push(`unexpected tool ${JSON.stringify(name)}`);
  for (const [name, was] of before) {
    const is = now.get(name);
    if (is) out.push(...toolDifferences(was, is));
  }
  return out;
}

/**
 * What a replica of a named host lacks or serves differently from what sessions placed in the
 * host advertised: every advertised tool must be served, with the same environment and identical
 * input and output schemas. Tools no session uses yet are allowed (sessions may use a subset of
 * a host's tools, and a rolling deploy may add one). `advertised` may repeat a name (one entry
 * per session); each distinct difference is listed once.
 */
export function servedDifferences(advertised: readonly ToolPlacement[], served: readonly ToolPlacement[]): string[] {
  const out = new Set<string>();
  const now = new Map(served.map((t) => [t.name, t]));
  for (const was of advertised) {
    const is = now.get(was.name);
    if (!is) out.add(`missing tool ${JSON.stringify(was.name)}`);
    else for (const d of toolDifferences(was, is)) out.add(d);
  }
  return [...out];
}

function toolDifferences(was: ToolPlacement, is: ToolPlacement): string[] {
  const name = was.name;
  const out: string[] = [];
  if (!isDeepStrictEqual(was.env, is.env)) {
    out.push(`${name}: environment ${JSON.stringify(was.env)} became ${JSON.stringify(is.env)}`);
  }
  for (const path of schemaDifferences(was.inputSchema, is.inputSchema, "input")) out.push(`${name}: ${path}`);
  for (const path of schemaDifferences(was.outputSchema, is.outputSchema, "output")) out.push(`${name}: ${path}`);
  return out;
}

/** JSON-pointer-like paths where two schemas differ (at most a few per tool). */
function schemaDifferences(a: unknown, b: unknown, path: string, limit = 5): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const objects = a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b);
  if (!objects) return [`${path} schema differs: ${JSON.stringify(a)} → ${JSON.stringify(b)}`.slice(0, 300)];
  const out: string[] = [];
  const keys = new Set([...Object.keys(a as object), ...Object.keys(b as object)]);
  for (const k of keys) {
    if (out.length >= limit) break;
    const av = (a as Record<string, unknown>)[k];
    const bv = (b as Record<string, unknown>)[k];
    out.push(...schemaDifferences(av, bv, `${path}.${k}`, limit - out.length));
  }
  return out;
}

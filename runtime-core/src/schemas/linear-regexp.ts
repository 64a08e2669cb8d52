/**
 * JSON Schema patterns from tenants, run in linear time. A backtracking engine (JavaScript's
 * RegExp) takes exponential time on patterns like `^(a|a)*$`, on the event loop every tenant
 * shares; RE2 (re2js, a JavaScript port) never backtracks. A JavaScript pattern is read as RE2
 * reads it after its escapes are translated (`\uXXXX`, `\u{…}`); what RE2 cannot express at all
 * (lookaround, backreferences) is said so, and each caller decides what that means.
 */
import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js";
import { RE2JS } from "re2js";

/** Compiled patterns, by source: validators of many schemas share them. */
const compiled = new Map<string, RE2JS | Error>();
const MAX_CACHED = 2000;

/** The JavaScript pattern in RE2's syntax: its `\u` escapes as `\x{…}`, `[^]` as `[\s\S]`. */
export function re2Source(source: string): string {
  let out = "";
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "[" && source.startsWith("[^]", i)) {
      out += "[\\s\\S]";
      i += 2;
      continue;
    }
    if (c !== "\\") {
      out += c;
      continue;
    }
    const next = source[i + 1];
    const four = /^[0-9a-fA-F]{4}/.exec(source.slice(i + 2));
    const braced = /^\{([0-9a-fA-F]{1,6})\}/.exec(source.slice(i + 2));
    if (next === "u" && braced) {
      out += `\\x{${braced[1]}}`;
      i += 1 + braced[0].length;
    } else if (next === "u" && four) {
      out += `\\x{${four[0]}}`;
      i += 5;
    } else {
      out += c + (next ?? "");
      i += 1;
    }
  }
  return out;
}

/** The pattern compiled by RE2, or the reason it cannot be. */
export function linearPattern(source: string): RE2JS | Error {
  let found = compiled.get(source);
  if (found) return found;
  try {
    found = RE2JS.compile(re2Source(source));
  } catch (error) {
    found = new Error(`RE2 cannot run ${JSON.stringify(source)}: ${(error as Error).message}`);
  }
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(source, found);
  return found;
}

function matcher(source: string, pattern: RE2JS): RegExpLike & { toString(): string } {
  return {
    // JSON Schema's `pattern` matches anywhere in the string, as RegExp.test does.
    test: (text: string) => pattern.matcher(text).find(),
    // Ajv keys compiled patterns by this text: it must differ per pattern.
    toString: () => `/${source}/re2`,
  };
}

/** Ajv's engine where Brain alone checks a tool: a pattern RE2 cannot run fails the schema. */
export const linearRegExp: RegExpEngine = Object.assign(
  (source: string) => {
    const pattern = linearPattern(source);
    if (pattern instanceof Error) throw pattern;
    return matcher(source, pattern);
  },
  { code: "re2" },
);

/**
 * Ajv's engine for checks the tool's own runtime repeats (a host tool's input, which its SDK
 * parses with zod): a pattern RE2 cannot run is left to that runtime instead of run here.
 */
export const linearRegExpOrSkip: RegExpEngine = Object.assign(
  (source: string) => {
    const pattern = linearPattern(source);
    if (pattern instanceof Error) return { test: () => true, toString: () => `/${source}/skipped` };
    return matcher(source, pattern);
  },
  { code: "re2-or-skip" },
);

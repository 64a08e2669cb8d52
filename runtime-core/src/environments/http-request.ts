/**
 * From an `http_json` descriptor and a tool input to one HTTP request against the Environment:
 * `{field}` placeholders in the path take the input's top-level fields (URI-encoded); the other
 * fields become the query string (GET, DELETE) or the JSON body (POST, PUT, PATCH). The request
 * never leaves the Environment's base URL, and carries the Environment's headers.
 */
import { errorOutcome, type Outcome } from "@aexhq/brain-contracts";
import type { HttpJsonDescriptor } from "./descriptor.js";

/** What an Environment contributes to each request: its base URL and its (decrypted) headers. */
export interface EnvironmentTarget {
  baseUrl: string;
  headers: Record<string, string>;
}

export interface HttpCall {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

export type BuiltCall = { ok: true; call: HttpCall } | { ok: false; outcome: Outcome };

const PLACEHOLDER = /\{([^{}/]+)\}/g;

export function buildHttpCall(target: EnvironmentTarget, descriptor: HttpJsonDescriptor, input: unknown): BuiltCall {
  const fields = inputFields(input);
  if (!fields) return invalidInput("the input must be a JSON object to fill an http_json request");
  const used = new Set<string>();
  let problem: string | null = null;
  const path = descriptor.path.replace(PLACEHOLDER, (_whole, field: string) => {
    used.add(field);
    const value = Object.hasOwn(fields, field) ? fields[field] : undefined;
    if (value === undefined || value === null) {
      problem ??= `the input has no ${JSON.stringify(field)} for the path ${descriptor.path}`;
      return "";
    }
    if (typeof value === "object") {
      problem ??= `the input's ${JSON.stringify(field)} fills a path segment: it must be a string, number or boolean`;
      return "";
    }
    const text = String(value);
    // Encoded, a value cannot add a segment; these two would still walk the path.
    if (text === "" || text === "." || text === "..") {
      problem ??= `the input's ${JSON.stringify(field)} cannot be ${JSON.stringify(text)} in a path`;
      return "";
    }
    return encodeURIComponent(text);
  });
  if (problem) return invalidInput(problem);

  const url = joinBase(target.baseUrl, path);
  if (!url) {
    return {
      ok: false,
      outcome: errorOutcome(
        "setup_failed",
        `the descriptor's path ${descriptor.path} leaves the Environment's base URL`,
      ),
    };
  }
  const rest = Object.entries(fields).filter(([k]) => !used.has(k));
  const headers = lowerCased(target.headers);
  headers.accept ??= "application/json";
  let body: string | undefined;
  if (descriptor.method === "GET" || descriptor.method === "DELETE") {
    for (const [key, value] of rest) appendQuery(url, key, value);
  } else {
    body = JSON.stringify(Object.fromEntries(rest));
    headers["content-type"] = "application/json";
  }
  return { ok: true, call: { method: descriptor.method, url, headers, body } };
}

/** The base URL's origin and path followed by `path`; null when the result escapes them. */
export function joinBase(baseUrl: string, path: string): URL | null {
  let base: URL;
  let url: URL;
  try {
    base = new URL(baseUrl);
    const prefix = base.pathname.replace(/\/+$/, "");
    url = new URL(`${prefix}${path}`, base.origin);
  } catch {
    return null;
  }
  return withinBase(base, url) ? url : null;
}

/** Whether `url` lies under the base URL: same origin, and inside its path. */
export function withinBase(base: URL, url: URL): boolean {
  const prefix = base.pathname.replace(/\/+$/, "");
  if (url.origin !== base.origin) return false;
  return prefix === "" || url.pathname === prefix || url.pathname.startsWith(`${prefix}/`);
}

function inputFields(input: unknown): Record<string, unknown> | null {
  if (input === undefined || input === null) return {};
  if (typeof input !== "object" || Array.isArray(input)) return null;
  return input as Record<string, unknown>;
}

function appendQuery(url: URL, key: string, value: unknown): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    for (const item of value) if (item !== null && item !== undefined) url.searchParams.append(key, queryText(item));
    return;
  }
  url.searchParams.append(key, queryText(value));
}

function queryText(value: unknown): string {
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

function invalidInput(message: string): BuiltCall {
  return { ok: false, outcome: errorOutcome("invalid_input", message.slice(0, 8192)) };
}

// The descriptor an HTTP Environment interprets, read once per invocation. Anything but a
// well-formed http_json descriptor is an unsupported runtime: a setup_failed outcome, never retried.
import { describe, expect, it } from "vitest";
import { parseDescriptor } from "../../src/environments/descriptor.js";

function refusal(value: unknown): string {
  const parsed = parseDescriptor(value);
  if (parsed.ok) throw new Error("accepted");
  expect(parsed.outcome.status).toBe("error");
  const error = (parsed.outcome as { error: { code: string; message: string } }).error;
  expect(error.code).toBe("setup_failed");
  return error.message;
}

describe("parseDescriptor", () => {
  it("accepts an http_json descriptor with a path relative to the base URL", () => {
    expect(parseDescriptor({ type: "http_json", method: "GET", path: "/repos/{owner}/issues/{number}" })).toEqual({
      ok: true,
      descriptor: { type: "http_json", method: "GET", path: "/repos/{owner}/issues/{number}" },
    });
  });

  it("names another runtime's descriptor type, bounded, and calls a non-object 'this descriptor'", () => {
    expect(refusal({ type: "wasm" })).toBe(
      'unsupported runtime: an HTTP Environment interprets http_json descriptors, not descriptor type "wasm"',
    );
    expect(refusal({ type: "x".repeat(1000) })).toContain(`"${"x".repeat(64)}"`);
    expect(refusal({ type: "x".repeat(1000) })).not.toContain("x".repeat(65));
    for (const value of [null, "http_json", 7, [], { method: "GET" }])
      expect(refusal(value)).toContain("this descriptor");
  });

  it("refuses a malformed http_json descriptor, saying which field", () => {
    expect(refusal({ type: "http_json", method: "GET", path: "//evil.example/x" })).toContain(
      "path: a path starting with a single /",
    );
    expect(refusal({ type: "http_json", method: "GET", path: "relative" })).toContain("path:");
    expect(refusal({ type: "http_json", method: "BREW", path: "/x" })).toContain("method:");
    expect(refusal({ type: "http_json", method: "GET", path: "/x", extra: 1 })).toContain("malformed http_json");
    expect(refusal({ type: "http_json", method: "GET", path: `/${"a".repeat(2048)}` })).toContain("path:");
  });
});

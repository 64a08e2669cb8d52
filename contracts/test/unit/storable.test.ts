// Text Postgres refuses (NUL, unpaired surrogates) is found before any write, and named by path.
import { findUnstorable, isStorableText, toStorable } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";

describe("findUnstorable", () => {
  it("is null for storable values of every shape", () => {
    for (const v of [null, 1, true, "text 🙂", [], {}, { a: [{ b: "c" }, 2, null] }])
      expect(findUnstorable(v)).toBeNull();
  });

  it("names the first unstorable string or key by its path", () => {
    expect(findUnstorable({ a: [1, { b: "x\u0000" }] }, "$.outcome")).toBe("$.outcome.a[1].b");
    expect(findUnstorable({ ok: "fine", "odd key": ["\ud800"] })).toBe('$["odd key"][0]');
    expect(findUnstorable({ "k\u0000": 1 })).toBe('$["k\\u0000"]');
    expect(findUnstorable("\udc00 alone")).toBe("$");
    // The first in document order, not the last one looked at.
    expect(findUnstorable(["ok", "\u0000", { a: "\u0000" }])).toBe("$[1]");
  });

  it("cuts a long path, which stays storable itself", () => {
    let v: unknown = "\u0000";
    for (let i = 0; i < 100; i++) v = { level: v };
    const path = findUnstorable(v)!;
    expect(path.length).toBeLessThanOrEqual(201);
    expect(path.endsWith("…")).toBe(true);
    expect(isStorableText(path)).toBe(true);
  });

  it("looks through nesting deeper than the call stack", () => {
    let v: unknown = "\u0000";
    for (let i = 0; i < 100_000; i++) v = [v];
    expect(findUnstorable(v)).not.toBeNull();
  });
});

describe("toStorable", () => {
  it("returns a storable value itself, and replaces what is not with U+FFFD", () => {
    const ok = { a: ["b"] };
    expect(toStorable(ok)).toBe(ok);
    expect(toStorable({ "k\u0000": "v\ud800" })).toEqual({ "k\ufffd": "v\ufffd" });
  });
});

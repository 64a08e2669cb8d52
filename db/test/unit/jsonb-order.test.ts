// What this process hands on of its own writes must equal what a read of the journal returns
// (db/test/written-records.test.ts compares with Postgres itself); these pin the ordering rules.
import { describe, expect, it } from "vitest";
import { asStoredJson, jsonbKeyOrder } from "../../src/jsonb-order.js";

const keysOf = (v: unknown) => Object.keys(v as object);

describe("asStoredJson", () => {
  it("puts every object's keys in jsonb's order: shorter first, then bytewise", () => {
    const v = asStoredJson({ outcome: { value: { zz: 1, a: 2, ab: [{ yy: 1, b: 2 }] }, status: "ok" }, call: 3 });
    expect(keysOf(v)).toEqual(["call", "outcome"]);
    const outcome = (v as { outcome: Record<string, unknown> }).outcome;
    expect(keysOf(outcome)).toEqual(["value", "status"]);
    expect(keysOf(outcome.value)).toEqual(["a", "ab", "zz"]);
    expect(keysOf((outcome.value as { ab: unknown[] }).ab[0])).toEqual(["b", "yy"]);
  });

  it("keeps what JSON keeps: no undefined, dates as text, and objects already in order unchanged", () => {
    const at = new Date(0);
    expect(asStoredJson({ b: 1, a: undefined, at })).toEqual({ b: 1, at: at.toISOString() });
    const inOrder = { a: 1, bb: { c: 2, dd: [1, { e: 3 }] } };
    const copy = asStoredJson(inOrder);
    expect(copy).toEqual(inOrder);
    expect(copy).not.toBe(inOrder);
    expect(asStoredJson(undefined)).toBeUndefined();
  });

  it("orders keys beyond ASCII by their UTF-8 bytes", () => {
    expect(["é", "z", "ab"].sort(jsonbKeyOrder)).toEqual(["z", "ab", "é"]);
    expect(keysOf(asStoredJson({ é: 1, z: 2 }))).toEqual(["z", "é"]);
  });
});

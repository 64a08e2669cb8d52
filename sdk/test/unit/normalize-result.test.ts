import { describe, expect, it } from "vitest";
import { z } from "zod";
import { normalizeResult } from "../../src/normalize-result.js";

class Money {
  constructor(readonly cents: number) {}
}

describe("ordinary output", () => {
  it("wraps valid output as ok, after the output schema's defaults and transforms", async () => {
    const output = z.object({
      name: z.string().trim(),
      size: z
        .string()
        .transform((s) => s.length)
        .pipe(z.number()),
      tag: z.string().default("none"),
    });
    expect(await normalizeResult({ name: "  a  ", size: "abcd" }, output)).toEqual({
      status: "ok",
      value: { name: "a", size: 4, tag: "none" },
    });
  });

  it("runs async output checks (parseAsync)", async () => {
    const output = z.string().refine(async (s) => s.startsWith("ok"));
    expect(await normalizeResult("ok-1", output)).toEqual({ status: "ok", value: "ok-1" });
    expect(await normalizeResult("bad", output)).toMatchObject({ status: "error", error: { code: "invalid_output" } });
  });

  it("turns output failing the schema into an invalid_output error with the issues", async () => {
    const outcome = await normalizeResult({ value: 1 }, z.object({ value: z.string() }));
    expect(outcome).toMatchObject({
      status: "error",
      error: { code: "invalid_output", details: [expect.objectContaining({ path: ["value"], code: "invalid_type" })] },
    });
  });

  it("accepts any plain JSON without an output schema", async () => {
    const value = { a: [1, "two", null, true, { b: 2.5 }] };
    expect(await normalizeResult(value, undefined)).toEqual({ status: "ok", value });
    expect(await normalizeResult(null, undefined)).toEqual({ status: "ok", value: null });
  });

  it.each([
    ["undefined", undefined],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["a BigInt", 10n],
    ["a Date", new Date(0)],
    ["a class instance", new Money(5)],
    ["a Map", new Map()],
    ["a nested undefined", { a: { b: undefined } }],
    ["a function", { f: () => 1 }],
  ])("rejects %s as invalid_output", async (_label, value) => {
    expect(await normalizeResult(value, undefined)).toMatchObject({
      status: "error",
      error: { code: "invalid_output" },
    });
  });

  it("requires plain JSON after schema transforms too", async () => {
    const output = z.object({
      at: z
        .string()
        .transform((s) => new Date(s))
        .pipe(z.any()),
    });
    const outcome = await normalizeResult({ at: "2024-01-01" }, output);
    expect(outcome).toMatchObject({ status: "error", error: { code: "invalid_output", details: { path: "$.at" } } });
  });

  it("treats objects with a non-reserved status as ordinary data", async () => {
    expect(await normalizeResult({ status: "pending", id: 1 }, undefined)).toEqual({
      status: "ok",
      value: { status: "pending", id: 1 },
    });
    const strictOutput = z.object({ status: z.literal("pending") });
    expect(await normalizeResult({ status: "done" }, strictOutput)).toMatchObject({
      error: { code: "invalid_output" },
    });
  });

  it("snapshots the value: mutating it after publishing does not change the result", async () => {
    const value = { items: [1] };
    const pending = normalizeResult(value, undefined);
    value.items.push(2);
    expect(await pending).toEqual({ status: "ok", value: { items: [1] } });
  });
});

describe("outcome envelopes", () => {
  it("validates an explicit ok.value with the output schema", async () => {
    const output = z.object({ n: z.number().default(7) });
    expect(await normalizeResult({ status: "ok", value: {} }, output)).toEqual({ status: "ok", value: { n: 7 } });
    expect(await normalizeResult({ status: "ok", value: { n: "x" } }, output)).toMatchObject({
      error: { code: "invalid_output" },
    });
  });

  it("never inspects ok.value for another envelope: business data may use reserved statuses", async () => {
    const business = { status: "error", error: "this is data, not an outcome" };
    expect(await normalizeResult({ status: "ok", value: business }, undefined)).toEqual({
      status: "ok",
      value: business,
    });
  });

  it("requires ok.value to be plain JSON", async () => {
    expect(await normalizeResult({ status: "ok", value: new Money(1) }, undefined)).toMatchObject({
      error: { code: "invalid_output" },
    });
  });

  it("passes an error outcome through, preserving code, message, retryable and details, bypassing the output schema", async () => {
    const outcome = {
      status: "error",
      error: { code: "not_found", message: "No such record.", retryable: false, details: { id: "42" } },
    };
    expect(await normalizeResult(outcome, z.number())).toEqual(outcome);
  });

  it.each([
    { status: "timeout" },
    { status: "cancelled", cause: "sdk_cancel", message: "stopped" },
    { status: "unknown" },
  ])("passes the non-success outcome %o through without output validation", async (outcome) => {
    expect(await normalizeResult(outcome, z.number())).toEqual(outcome);
  });

  it.each([
    ["ok without value", { status: "ok" }],
    ["ok with extra keys", { status: "ok", value: 1, extra: true }],
    ["error without error", { status: "error" }],
    ["error with a string error", { status: "error", error: "boom" }],
    ["error with an empty code", { status: "error", error: { code: "", message: "m" } }],
    ["error with unknown keys", { status: "error", error: { code: "c", message: "m", stack: "…" } }],
    ["timeout with unknown keys", { status: "timeout", reason: "slow" }],
    ["cancelled with an unknown cause", { status: "cancelled", cause: "bored" }],
  ])("turns a malformed envelope (%s) into invalid_output", async (_label, envelope) => {
    expect(await normalizeResult(envelope, undefined)).toMatchObject({
      status: "error",
      error: { code: "invalid_output" },
    });
  });
});

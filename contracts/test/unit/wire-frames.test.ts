// The socket readers' frame schemas (wire-frames.ts) must answer exactly as the published ones
// (frames.ts) for anything JSON.parse can hand them: same frames, same fields, same verdict, same
// value. Property-based: frames of every type with arbitrary JSON in their JSON fields, then
// mutated (a field dropped, added, or given another type; a number past a double's range).

import {
  admitParsedJson,
  HostFrameSchema,
  JsonFieldSchema,
  MAX_JSON_DEPTH,
  ServerFrameSchema,
  WireHostFrameSchema,
  WireServerFrameSchema,
} from "@aexhq/brain-contracts";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";

type Union = z.ZodDiscriminatedUnion<z.ZodObject[]>;

function shapes(union: Union): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const option of union.options) {
    const type = (option.shape.type as z.ZodLiteral).value as string;
    out[type] = Object.keys(option.shape).sort();
  }
  return out;
}

const SESSION = "3f1c8a2e-7b4d-4e1a-9c3b-2d5e6f7a8b9c";
const json = fc.jsonValue({ maxDepth: 4 });
const outcome = fc.oneof(
  json.map((value) => ({ status: "ok", value })),
  fc
    .record(
      { code: fc.string({ minLength: 1, maxLength: 5 }), message: fc.string(), details: json },
      { requiredKeys: ["code", "message"] },
    )
    .map((error) => ({ status: "error", error })),
  fc.constantFrom({ status: "timeout", cause: "deadline" }, { status: "cancelled" }, { status: "unknown" }),
);
const call = { sessionId: SESSION, sequence: 7 };
const hostFrame = fc.oneof(
  fc.tuple(fc.string(), json).map(([kind, data]) => ({ type: "emit", id: 1, ...call, kind, data })),
  outcome.map((o) => ({ type: "result", id: 2, ...call, outcome: o })),
  fc.option(outcome, { nil: undefined }).map((o) => ({ type: "return", id: 3, ...call, outcome: o })),
  fc.tuple(fc.option(outcome, { nil: undefined }), fc.option(fc.string(), { nil: undefined })).map(([o, c]) => ({
    type: "finish",
    id: 4,
    ...call,
    outcome: o,
    content: c,
  })),
  json.map((request) => ({ type: "model", id: 5, ...call, request })),
  fc
    .option(json, { nil: undefined })
    .map((params) => ({ type: "environment", id: 6, ...call, operation: "list", params })),
  fc.constant({ type: "ping", id: 8 }),
  fc.constant({ type: "attach", id: 9, sessionId: SESSION }),
);
const serverFrame = fc.oneof(
  json.map((input) => ({ type: "invoke", ...call, tool: "lookup", input, deadline: null })),
  fc.option(json, { nil: undefined }).map((value) => ({ type: "ack", id: 1, sequence: 12, value })),
  fc.constant({ type: "cancel", ...call, status: "timeout" }),
  fc.constant({ type: "release", sessionId: SESSION }),
);

/** A frame as text, perhaps altered so that one schema or both must refuse it. */
function mutated(frame: fc.Arbitrary<object>): fc.Arbitrary<string> {
  return fc.tuple(frame, fc.nat(5), fc.string({ maxLength: 6 }), json, fc.nat(40)).map(([f, how, key, value, at]) => {
    const copy: Record<string, unknown> = { ...f };
    const keys = Object.keys(copy).filter((k) => k !== "type");
    const victim = keys[key.length % Math.max(keys.length, 1)];
    if (how === 1 && victim) delete copy[victim];
    if (how === 2) copy[`x${key}`] = value;
    if (how === 3 && victim) copy[victim] = value;
    const text = JSON.stringify(copy);
    // One of its numbers made too large for a double: JSON.parse reads ±Infinity, which JSON
    // cannot store.
    const numbers = [...text.matchAll(/(?<=[:,[])-?\d+(\.\d+)?([eE][+-]?\d+)?(?=[,}\]])/g)];
    const n = numbers[at % Math.max(numbers.length, 1)];
    if (how >= 4 && n) return `${text.slice(0, n.index)}1e400${text.slice(n.index + n[0].length)}`;
    return text;
  });
}

function agree(published: z.ZodType, wire: z.ZodType, text: string): void {
  const a = published.safeParse(JSON.parse(text));
  const b = wire.safeParse(JSON.parse(text));
  expect(b.success, text).toBe(a.success);
  if (a.success && b.success) expect(b.data, text).toEqual(a.data);
}

describe("the socket readers' frame schemas", () => {
  it("have the published schemas' frames, with the same fields each", () => {
    expect(shapes(WireHostFrameSchema as unknown as Union)).toEqual(shapes(HostFrameSchema as unknown as Union));
    expect(shapes(WireServerFrameSchema as unknown as Union)).toEqual(shapes(ServerFrameSchema as unknown as Union));
  });

  it("answer every host frame as HostFrameSchema does", () => {
    fc.assert(
      fc.property(mutated(hostFrame), (text) => agree(HostFrameSchema, WireHostFrameSchema, text)),
      {
        numRuns: 3000,
      },
    );
  });

  it("answer every server frame as ServerFrameSchema does", () => {
    fc.assert(
      fc.property(mutated(serverFrame), (text) => agree(ServerFrameSchema, WireServerFrameSchema, text)),
      {
        numRuns: 2000,
      },
    );
  });

  it("refuse a number past a double's range wherever it is, and hand other values through uncopied", () => {
    const deep = `{"type":"invoke","sessionId":"${SESSION}","sequence":1,"tool":"t","deadline":null,"input":{"a":[1,{"b":-1e999}]}}`;
    expect(ServerFrameSchema.safeParse(JSON.parse(deep)).success).toBe(false);
    expect(WireServerFrameSchema.safeParse(JSON.parse(deep)).success).toBe(false);
    const frame = JSON.parse(deep.replace("-1e999", "2"));
    const parsed = WireServerFrameSchema.parse(frame);
    expect(parsed.type === "invoke" && parsed.input).toBe(frame.input);
  });

  it("check any depth without running out of stack, and admit at most MAX_JSON_DEPTH levels", () => {
    const nest = (levels: number, leaf: unknown) => {
      let value = leaf;
      for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { a: value };
      return value;
    };
    expect(admitParsedJson(nest(MAX_JSON_DEPTH, 1))).toBe(true);
    expect(admitParsedJson(nest(MAX_JSON_DEPTH + 1, 1))).toBe(false);
    expect(admitParsedJson(nest(200_000, 1))).toBe(false);
    expect(admitParsedJson(nest(10, Number.NEGATIVE_INFINITY))).toBe(false);
    // The published schemas say the same.
    expect(JsonFieldSchema.safeParse(nest(MAX_JSON_DEPTH, 1)).success).toBe(true);
    expect(JsonFieldSchema.safeParse(nest(MAX_JSON_DEPTH + 1, 1)).success).toBe(false);
  });
});

// The one home of schema-failure formatting: a message's text (configuration, descriptors, frames),
// the `invalid_request` details the HTTP API answers with, and a tool outcome's bounded issues.
import { issueDetail, issuesForWire, issuesText } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import { z } from "zod";

const schema = z.object({ a: z.object({ b: z.number() }), c: z.string() });
const failure = (value: unknown) => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error("parsed");
  return parsed.error;
};

describe("issuesText", () => {
  it("joins `path: message` per issue, with the path dotted", () => {
    const text = issuesText(failure({ a: { b: "x" }, c: 1 }));
    expect(text.split("; ").map((part) => part.split(":")[0])).toEqual(["a.b", "c"]);
  });

  it("names a root issue by `root`, and takes a prefix and separator", () => {
    expect(issuesText(failure(null), { root: "descriptor" })).toMatch(/^descriptor: /);
    expect(issuesText(failure(null))).toMatch(/^: /);
    const text = issuesText(failure({ a: { b: "x" }, c: 1 }), { prefix: "- ", separator: "\n" });
    expect(text.split("\n").map((line) => line.slice(0, 5))).toEqual(["- a.b", "- c: "]);
  });
});

describe("issueDetail", () => {
  it("carries the dotted path, message and zod code, array indexes as text", () => {
    const error = z.object({ list: z.array(z.number()) }).safeParse({ list: [1, "x"] }).error!;
    expect(error.issues.map(issueDetail)).toEqual([
      { path: "list.1", message: expect.any(String), code: "invalid_type" },
    ]);
  });
});

describe("issuesForWire", () => {
  it("keeps the path as an array (a key may hold a dot) and bounds count and message length", () => {
    const error = z.object({ "a.b": z.array(z.number()) }).safeParse({ "a.b": [1, "x"] }).error!;
    expect(issuesForWire(error)).toEqual([{ code: "invalid_type", path: ["a.b", 1], message: expect.any(String) }]);
    const many = z
      .array(z.string().refine(() => false, "m".repeat(2_000)))
      .safeParse(Array.from({ length: 50 }, () => "x")).error!;
    const wire = issuesForWire(many);
    expect(wire).toHaveLength(20);
    for (const issue of wire) expect(issue.message).toHaveLength(500);
  });
});

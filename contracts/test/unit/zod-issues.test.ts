// The one formatter of schema failures: a message's text (configuration, descriptors, frames) and
// the `invalid_request` details the HTTP API answers with.
import { issueDetail, issuesText } from "@aexhq/brain-contracts";
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

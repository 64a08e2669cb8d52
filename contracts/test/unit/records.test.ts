import { brainRecord, checkRecord, payloadOf, RECORD_KINDS, RECORD_PAYLOADS } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";

describe("the journal's record schemas", () => {
  it("have one schema for each of Brain's own record kinds, and none for any other", () => {
    expect(Object.keys(RECORD_PAYLOADS).sort()).toEqual([...RECORD_KINDS].sort());
    expect(brainRecord({ seq: 4, kind: "progress", payload: { call: 3 } })).toBeNull();
    expect(checkRecord({ seq: 4, kind: "progress", payload: "anything" })).toEqual([]);
  });

  it("accept a record as Brain writes it, with the fields a reader may add", () => {
    const ended = {
      seq: 9,
      kind: "activation_ended",
      payload: { activation: 3, message: 2, status: "failed", text: "", error: { code: "model_error", message: "x" } },
    };
    expect(checkRecord(ended)).toEqual([]);
    expect(payloadOf(ended, "activation_ended")?.error?.code).toBe("model_error");
    expect(payloadOf(ended, "tool_call_ended")).toBeNull();
  });

  it("name the field of a record that does not match its kind", () => {
    const issues = checkRecord({
      seq: 5,
      kind: "tool_call_ended",
      payload: { call: "5", outcome: { status: "done" } },
    });
    expect(issues.map((i) => i.path.join(".")).sort()).toEqual(["call", "outcome.status"]);
  });
});

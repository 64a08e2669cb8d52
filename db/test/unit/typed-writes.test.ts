import { appendRecords, rel } from "@aexhq/brain-db/ops";
import { describe, expect, it } from "vitest";

// What Brain appends is typed by kind (contracts/src/records.ts): a record of one of its kinds
// with that kind's payload, whose sequence fields may be rel() of the same append. The lines
// marked to be compile errors are the point: `npm run typecheck` fails if any of them compiles.
const session = "00000000-0000-4000-8000-000000000001";

describe("appending Brain's records", () => {
  it("takes each kind with its own payload, relative references included", () => {
    const op = appendRecords(session, [
      { kind: "user_message", payload: { text: "hi" } },
      { kind: "activation_started", payload: { cause: "user_message", message: rel(-1) } },
    ]);
    expect(op.merge?.kind).toBe("append");
  });

  it("refuses, at compile time, a payload of another shape or a kind that is not Brain's", () => {
    const wrongShape = () =>
      // @ts-expect-error: a user_message carries text
      appendRecords(session, [{ kind: "user_message", payload: { body: "hi" } }]);
    const wrongStatus = () =>
      appendRecords(session, [
        // @ts-expect-error: an activation ends completed, failed or cancelled
        { kind: "activation_ended", payload: { activation: 2, message: 1, status: "done", text: "" } },
      ]);
    const notBrains = () =>
      // @ts-expect-error: tools' events are reported on their call, not appended here
      appendRecords(session, [{ kind: "lookup_started", payload: { id: "42" } }]);
    expect([wrongShape, wrongStatus, notBrains].every((f) => typeof f === "function")).toBe(true);
  });
});

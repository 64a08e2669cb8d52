import { RECORD_KINDS } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
// The console's page modules (no build step); records.js touches the DOM only when it renders.
import { isRecordKind, labelOf, RECORD_LABELS } from "../../console/records.js";

describe("the console's record kinds", () => {
  it("labels exactly the journal's record kinds, and shows anything else as a tool's event", () => {
    expect(Object.keys(RECORD_LABELS).sort()).toEqual([...RECORD_KINDS].sort());
    for (const kind of RECORD_KINDS) expect(isRecordKind(kind)).toBe(true);
    expect(isRecordKind("lookup_started")).toBe(false);
    expect(labelOf("lookup_started")).toBe("event");
  });
});

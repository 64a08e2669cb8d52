import { applyFilePatch, parseUnifiedDiff } from "@aexhq/brain-db/driver";
import { describe, expect, it } from "vitest";

const source = ["one", "two", "three", "four", "five", "six", "seven", ""].join("\n");
const patch = `Commentary before the first file is ignored.
--- a/src/x.js
+++ b/src/x.js
@@ -1,3 +1,4 @@
 one
+one and a half
 two
 three
@@ -5,3 +6,3 @@
 five
-six
+SIX
 seven
`;

describe("unified diffs", () => {
  it("applies each hunk where it says, shifted by the hunks before it", () => {
    const [file] = parseUnifiedDiff(patch);
    expect(file?.path).toBe("src/x.js");
    expect(file?.hunks).toHaveLength(2);
    expect(applyFilePatch(source, file!)).toBe(
      ["one", "one and a half", "two", "three", "four", "five", "SIX", "seven", ""].join("\n"),
    );
  });

  it("refuses a hunk whose context is not there: another version of the file", () => {
    const [file] = parseUnifiedDiff(patch);
    expect(() => applyFilePatch(source.replace("five", "5"), file!)).toThrow("the hunk at line 5 does not fit");
    expect(() => applyFilePatch(`zero\n${source}`, file!)).toThrow("the hunk at line 1 does not fit");
  });
});

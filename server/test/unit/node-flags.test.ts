import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// The server runs with V8 flags of its own (a larger young generation, see server/src/main.ts):
// its entry point's `#!` line carries them when it runs as a program, and `npm start`, which runs
// it in-process with the worker, passes them on the command line. Both must say the same.

const root = new URL("../../../", import.meta.url);

function entryFlags(): string[] {
  const first = readFileSync(new URL("server/src/main.ts", root), "utf8").split("\n", 1)[0]!;
  const m = /^#!\/usr\/bin\/env -S node\s+(.*)$/.exec(first);
  return m ? m[1]!.trim().split(/\s+/) : [];
}

describe("the server's V8 flags", () => {
  it("are on its entry point's #! line", () => {
    expect(entryFlags()).toContain("--max-semi-space-size=64");
  });

  it("are the ones npm start passes", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { scripts: { start: string } };
    const m = /^node\s+(.*?)\s*scripts\/start\.mjs$/.exec(pkg.scripts.start);
    expect(m?.[1]?.split(/\s+/) ?? []).toEqual(entryFlags());
  });
});

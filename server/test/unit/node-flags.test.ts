import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { nodeFlagsOf } from "../../../bench/src/proc.js";

// The server runs with V8 flags of its own (a larger young generation, see server/src/main.ts):
// its entry point's `#!` line carries them when it runs as a program, and so does the `brain` bin,
// whose `brain start` runs it in-process with a worker; `npm start` passes them on the command
// line. All must say the same.

const root = new URL("../../../", import.meta.url);

// The source's line, read the way the bench reads the built one (spawnServer).
const entryFlags = () => nodeFlagsOf(fileURLToPath(new URL("server/src/main.ts", root)));

describe("the server's V8 flags", () => {
  it("are on its entry point's #! line", () => {
    expect(entryFlags()).toContain("--max-semi-space-size=64");
  });

  it("are the ones npm start passes", () => {
    const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as { scripts: { start: string } };
    const m = /^node\s+(.*?)\s*cli\/bin\/brain\.js start$/.exec(pkg.scripts.start);
    expect(m?.[1]?.split(/\s+/) ?? []).toEqual(entryFlags());
  });

  it("are on the brain bin's #! line (brain start)", () => {
    expect(nodeFlagsOf(fileURLToPath(new URL("cli/bin/brain.js", root)))).toEqual(entryFlags());
  });
});

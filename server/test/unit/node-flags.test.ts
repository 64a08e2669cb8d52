import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { serverNodeFlags } from "../../../bench/src/runner/proc.js";

// The server runs with V8 flags of its own (a larger young generation, see server/src/main.ts).
// `npm start` passes them, and the bench reads them from there (serverNodeFlags). No bin carries
// them on its `#!` line: that takes `env -S`, which BusyBox's `env` (Alpine) and others lack, and
// there the bin would not start at all.

const root = fileURLToPath(new URL("../../../", import.meta.url));

/** Every bin the packages declare, as built, and the committed CLI bin. */
const BINS = [
  "server/src/main.ts", // brain-server (dist/main.js)
  "worker/src/main.ts", // brain-worker (dist/main.js)
  "cli/src/main.ts",
  "cli/bin/brain.js", // brain
  "sdk/src/cli/brain-tools.ts",
  "sdk/bin/brain-tools.js", // brain-tools
];

describe("the server's V8 flags", () => {
  it("are the ones npm start passes, read the way the bench reads them", () => {
    expect(serverNodeFlags(root)).toEqual(["--max-semi-space-size=64"]);
  });

  it("are on no bin's #! line: each is a plain `#!/usr/bin/env node`, which any env runs", () => {
    for (const bin of BINS) {
      const first = readFileSync(new URL(bin, `file://${root}`), "utf8").split("\n", 1)[0];
      expect([bin, first]).toEqual([bin, "#!/usr/bin/env node"]);
    }
  });
});

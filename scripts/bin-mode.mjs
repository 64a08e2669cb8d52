// After `tsc -b`: the `brain` bin must be executable. npm makes bin targets executable when it
// links them, but on a fresh `npm ci` that happens before `prepare` builds them, and tsc writes
// new files 0644, so `npx brain` would be refused.
import { chmodSync, existsSync } from "node:fs";

const bin = new URL("../cli/dist/main.js", import.meta.url);
if (existsSync(bin)) chmodSync(bin, 0o755);

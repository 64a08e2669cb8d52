// After `tsc -b`: the workspaces' `bin` files made executable. npm links them on install, before
// the build has written them, so a clean clone's bins would otherwise be plain files.
import { chmodSync, existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
for (const workspace of JSON.parse(readFileSync(join(root, "package.json"), "utf8")).workspaces) {
  const { bin = {} } = JSON.parse(readFileSync(join(root, workspace, "package.json"), "utf8"));
  for (const file of Object.values(typeof bin === "string" ? { bin } : bin)) {
    const path = join(root, workspace, file);
    if (existsSync(path)) chmodSync(path, 0o755);
  }
}

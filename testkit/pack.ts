// The SDK's tarball as `npm run pack:sdk` makes it (scripts/pack.mjs: packed from a staging
// directory, so test files running meanwhile keep loading this checkout's sdk/dist untouched).
import { mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runOk } from "./commands.js";
import { REPO_ROOT } from "./server-process.js";

/** Packs the SDK into `destination`; the tarball's path. */
export async function packSdk(destination: string): Promise<string> {
  mkdirSync(destination, { recursive: true });
  const before = new Set(readdirSync(destination));
  await runOk("node", [join(REPO_ROOT, "scripts", "pack.mjs"), "sdk", destination], REPO_ROOT);
  const made = readdirSync(destination).filter((f) => f.endsWith(".tgz") && !before.has(f));
  if (made.length !== 1) throw new Error(`packing the SDK made ${made.join(", ") || "nothing"}`);
  return join(destination, made[0] as string);
}

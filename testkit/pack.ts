// `npm pack` of the SDK, as `npm pack -w sdk` does it (the same package.json, prepack and postpack),
// but from a copy of sdk/ beside a copy of contracts/dist: the pack rewrites one module of the
// packed dist for its duration, and test files running meanwhile load this checkout's sdk/dist.
import { cpSync, mkdirSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runOk } from "./commands.js";
import { REPO_ROOT } from "./server-process.js";

export interface PackedSdk {
  tarball: string;
  /** The copy of sdk/ it was packed from, after the pack (its postpack has run). */
  packedFrom: string;
}

/** Packs the SDK into `destination`. */
export async function packSdk(destination: string): Promise<PackedSdk> {
  mkdirSync(destination, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), "brain-pack-sdk-"));
  const sdk = join(stage, "sdk");
  cpSync(join(REPO_ROOT, "sdk"), sdk, { recursive: true, filter: (src) => !src.includes("node_modules") });
  cpSync(join(REPO_ROOT, "contracts", "dist"), join(stage, "contracts", "dist"), { recursive: true });
  cpSync(join(REPO_ROOT, "contracts", "package.json"), join(stage, "contracts", "package.json"));
  const before = new Set(readdirSync(destination));
  await runOk("npm", ["pack", "--pack-destination", destination], sdk);
  const made = readdirSync(destination).filter((f) => f.endsWith(".tgz") && !before.has(f));
  if (made.length !== 1) throw new Error(`npm pack of the SDK made ${made.join(", ") || "nothing"}`);
  return { tarball: join(destination, made[0] as string), packedFrom: sdk };
}

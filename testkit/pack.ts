// `npm pack` of a workspace package, as a release does. Packing the SDK rewrites one module of
// sdk/dist for the moment of packing (its prepack and postpack), so packs of this checkout take
// turns: a lock directory next to the checkout's node_modules, taken by mkdir.
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runOk } from "./commands.js";
import { REPO_ROOT } from "./server-process.js";

const LOCK = join(REPO_ROOT, "node_modules", ".brain-pack.lock");

/** Packs workspace `workspace` (e.g. "sdk") into `destination`; resolves with the tarball's path. */
export async function packWorkspace(workspace: string, destination: string): Promise<string> {
  mkdirSync(destination, { recursive: true });
  await takeLock();
  try {
    const before = new Set(readdirSync(destination));
    await runOk("npm", ["pack", "--pack-destination", destination, "-w", workspace], REPO_ROOT);
    const made = readdirSync(destination).filter((f) => f.endsWith(".tgz") && !before.has(f));
    if (made.length !== 1) throw new Error(`npm pack -w ${workspace} made ${made.join(", ") || "nothing"}`);
    return join(destination, made[0] as string);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

async function takeLock(): Promise<void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      // A lock older than any pack takes is left by a killed run.
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 120_000) rmSync(LOCK, { recursive: true, force: true });
      await sleep(200);
    }
  }
}

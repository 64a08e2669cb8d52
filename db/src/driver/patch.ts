import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { applyFilePatch, parseUnifiedDiff } from "./unified-diff.js";

/**
 * Brain runs a copy of postgres.js's ES module build with two patches applied, kept as unified
 * diffs in db/driver/ (its README says what each change answers, and how to refresh them):
 * `postgres-3.4.9-fixes.patch`, the connection-loss fixes and what poolers and fail-over need,
 * ready to offer upstream; and `postgres-3.4.9-pipelines.patch`, pipelines for the journal
 * writer. `npm run build` writes the copy to db/dist/driver/postgres/ (scripts/patch-driver.mjs)
 * and connect.ts loads it. Any other version of the driver stops the build.
 */
export const DRIVER_VERSION = "3.4.9";
export const DRIVER_PATCHES = [`postgres-${DRIVER_VERSION}-fixes.patch`, `postgres-${DRIVER_VERSION}-pipelines.patch`];

/**
 * The driver's modules (its `src/`, by file name) with the patches applied, in order. Throws when
 * the installed package is not the pinned version, or when a hunk does not fit.
 */
export function patchedDriverSources(packageDir: string, patchesDir: string): Map<string, string> {
  const { version } = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string };
  if (version !== DRIVER_VERSION) {
    throw new Error(
      `postgres.js ${version} is installed; db/driver/ patches ${DRIVER_VERSION} (see db/driver/README.md to refresh them)`,
    );
  }
  const sourceDir = join(packageDir, "src");
  const modules = new Map(
    readdirSync(sourceDir)
      .filter((f) => f.endsWith(".js"))
      .map((f) => [f, readFileSync(join(sourceDir, f), "utf8")]),
  );
  for (const name of DRIVER_PATCHES) {
    for (const file of parseUnifiedDiff(readFileSync(join(patchesDir, name), "utf8"))) {
      const module = file.path.replace(/^src\//, "");
      const source = modules.get(module);
      if (source === undefined) throw new Error(`${name}: postgres.js has no ${file.path}`);
      modules.set(module, applyFilePatch(source, file));
    }
  }
  return modules;
}

/** Writes the patched modules into `targetDir`; writes nothing when a patch does not apply. */
export function writePatchedDriver(packageDir: string, patchesDir: string, targetDir: string): void {
  const modules = patchedDriverSources(packageDir, patchesDir);
  mkdirSync(targetDir, { recursive: true });
  for (const [name, text] of modules) writeFileSync(join(targetDir, name), text);
}

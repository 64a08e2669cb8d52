// WebAssembly components for tests, built from source with componentize-js (offline) and cached
// under .brain-test/components by a hash of everything that goes into them. A fresh checkout (CI)
// builds each once, ~5-15 s apiece; test files running in parallel share one build through a lock.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./server-process.js";

interface Recipe {
  /** The build script, run as `node <script> [...args] <out>`. */
  script: string;
  args: string[];
  /** Files and directories whose content decides the output. */
  inputs: string[];
}

const RECIPES = {
  script: {
    script: "worker/test/fixtures/build.mjs",
    args: ["script"],
    inputs: [
      "worker/test/fixtures/build.mjs",
      "worker/test/fixtures/script.js",
      "worker/test/fixtures/wit",
      "contracts/tool.wit",
    ],
  },
  unsupported: {
    script: "worker/test/fixtures/build.mjs",
    args: ["unsupported"],
    inputs: ["worker/test/fixtures/build.mjs", "worker/test/fixtures/unsupported.js", "contracts/tool.wit"],
  },
  inspect: {
    script: "examples/inspect/build.mjs",
    args: [],
    inputs: [
      "examples/inspect/build.mjs",
      "examples/inspect/inspect.js",
      "examples/inspect/wit",
      "sdk/contracts/tool.wit",
    ],
  },
} satisfies Record<string, Recipe>;

export type TestComponent = keyof typeof RECIPES;

const CACHE = join(REPO_ROOT, ".brain-test", "components");
const STALE_LOCK_MS = 5 * 60_000;

function files(path: string): string[] {
  const full = join(REPO_ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)))
    .sort();
}

/** The hash of a recipe's inputs and of the componentize-js that builds it. */
export function sourceHash(name: TestComponent): string {
  const recipe: Recipe = RECIPES[name];
  const hash = createHash("sha256").update(`${recipe.script} ${recipe.args.join(" ")}\n`);
  for (const file of recipe.inputs.flatMap(files)) {
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(REPO_ROOT, file)))
      .update("\0");
  }
  // The componentize-js the build script resolves: its package's own copy, else the hoisted one.
  const pkg = recipe.script.startsWith("examples/") ? "examples" : "worker";
  const manifest = [pkg, "."]
    .map((dir) => join(REPO_ROOT, dir, "node_modules/@bytecodealliance/componentize-js/package.json"))
    .find((path) => existsSync(path));
  if (manifest) hash.update(readFileSync(manifest));
  return hash.digest("hex").slice(0, 16);
}

/** The component's bytes, built now unless a build of the same sources is cached. */
export async function testComponent(name: TestComponent): Promise<Buffer> {
  return readFile(await testComponentPath(name));
}

export async function testComponentPath(name: TestComponent): Promise<string> {
  mkdirSync(CACHE, { recursive: true });
  const out = join(CACHE, `${name}-${sourceHash(name)}.wasm`);
  const lock = `${out}.lock`;
  for (;;) {
    if (existsSync(out)) return out;
    try {
      openSync(lock, "wx");
    } catch {
      // Another test file is building it; a lock left by a killed run is taken over.
      if (existsSync(lock) && Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      if (!existsSync(out)) {
        await build(RECIPES[name], `${out}.tmp`);
        renameSync(`${out}.tmp`, out);
      }
      return out;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}

function build(recipe: Recipe, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, recipe.script), ...recipe.args, out], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => {
      output += d;
    });
    child.stderr.on("data", (d) => {
      output += d;
    });
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`building ${out} failed (${code}):\n${output}`)),
    );
  });
}

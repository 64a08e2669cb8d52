// Builds inspect.wasm from inspect.js with componentize-js, offline.
//
//   node examples/inspect/build.mjs [out.wasm]
//
// componentize-js runs its own splicer as a component on Node's WASI shim, and that shim (0.26)
// starts with no preopens: without the first two lines it cannot read the source or the WIT.
import { _setPreopens } from "@bytecodealliance/preview2-shim/filesystem";

_setPreopens({ "/": "/" });

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

/** The WIT the component is built against: our world, its WASI deps, and Brain's binding. */
export function assembleWit(dir) {
  mkdirSync(join(dir, "deps", "brain-tool"), { recursive: true });
  copyFileSync(join(here, "wit", "world.wit"), join(dir, "world.wit"));
  for (const dep of readdirSync(join(here, "wit", "deps"))) {
    mkdirSync(join(dir, "deps", dep), { recursive: true });
    copyFileSync(join(here, "wit", "deps", dep, "package.wit"), join(dir, "deps", dep, "package.wit"));
  }
  // The binding as the SDK publishes it (@aexhq/brain/contracts/tool.wit).
  const require = createRequire(import.meta.url);
  copyFileSync(require.resolve("@aexhq/brain/contracts/tool.wit"), join(dir, "deps", "brain-tool", "tool.wit"));
}

export async function build(out = join(here, "inspect.wasm")) {
  const { componentize } = await import("@bytecodealliance/componentize-js");
  const wit = mkdtempSync(join(tmpdir(), "brain-inspect-wit-"));
  try {
    assembleWit(wit);
    const { component } = await componentize({
      sourcePath: join(here, "inspect.js"),
      witPath: wit,
      worldName: "tool-with-filesystem",
      // No outbound HTTP and no incoming-request handler: Brain's worker provides neither.
      disableFeatures: ["http", "fetch-event"],
    });
    writeFileSync(out, component);
    return { out, bytes: component.length };
  } finally {
    rmSync(wit, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const { out, bytes } = await build(process.argv[2]);
  console.log(`built ${out} (${bytes} bytes) in ${Date.now() - started} ms`);
}

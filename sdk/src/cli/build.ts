import { copyFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type ComponentSpec, type ToolPackage, UsageError } from "./package-config.js";
import { resolvePackage } from "./resolve.js";

/** The binding this SDK publishes (`@aexhq/brain/contracts/tool.wit`); components build against it. */
export const TOOL_WIT = fileURLToPath(new URL("../../contracts/tool.wit", import.meta.url));

type Componentize = (options: {
  sourcePath: string;
  witPath: string;
  worldName: string;
  disableFeatures?: string[];
}) => Promise<{ component: Uint8Array }>;

/**
 * componentize-js from the package's own dependencies. Its splicer runs on Node's WASI shim, which
 * (0.26) starts with no preopens and could then read neither the source nor the WIT: the shim
 * that componentize-js itself resolves gets the root preopened before componentize-js loads.
 */
async function loadComponentize(pkg: ToolPackage): Promise<Componentize> {
  const entry = resolvePackage("@bytecodealliance/componentize-js", pkg.dir);
  if (!entry) {
    throw new UsageError(
      `${pkg.name} builds components but cannot resolve @bytecodealliance/componentize-js: ` +
        "npm install --save-dev @bytecodealliance/componentize-js @bytecodealliance/preview2-shim",
    );
  }
  const shim = resolvePackage("@bytecodealliance/preview2-shim", dirname(fileURLToPath(entry)), "./filesystem");
  if (shim) {
    const { _setPreopens } = await import(shim.href);
    _setPreopens({ "/": "/" });
  }
  return (await import(entry.href)).componentize as Componentize;
}

/** The WIT directory for one component: the package's own world plus brain:tool, or brain:tool alone. */
function assembleWit(pkg: ToolPackage, spec: ComponentSpec, into: string): string {
  const deps = join(into, "deps", "brain-tool");
  mkdirSync(deps, { recursive: true });
  if (spec.wit) cpSync(resolve(pkg.dir, spec.wit), into, { recursive: true });
  copyFileSync(TOOL_WIT, join(deps, "tool.wit"));
  return spec.wit ? into : deps;
}

export interface Built {
  output: string;
  bytes: number;
  ms: number;
}

/** Builds every component the package's `brainTools.components` lists. */
export async function buildComponents(pkg: ToolPackage, log: (line: string) => void): Promise<Built[]> {
  if (pkg.components.length === 0) {
    log(`${pkg.name}: no components to build (package.json "brainTools.components" is empty)`);
    return [];
  }
  const componentize = await loadComponentize(pkg);
  const built: Built[] = [];
  for (const spec of pkg.components) {
    const started = Date.now();
    const wit = mkdtempSync(join(tmpdir(), "brain-tools-wit-"));
    try {
      const { component } = await componentize({
        sourcePath: resolve(pkg.dir, spec.source),
        witPath: assembleWit(pkg, spec, wit),
        worldName: spec.world ?? "tool",
        disableFeatures: spec.disableFeatures ?? ["http", "fetch-event"],
      });
      const output = resolve(pkg.dir, spec.output);
      mkdirSync(dirname(output), { recursive: true });
      writeFileSync(output, component);
      built.push({ output: spec.output, bytes: component.length, ms: Date.now() - started });
      log(`built ${spec.output} from ${spec.source} (${component.length} bytes, ${Date.now() - started} ms)`);
    } catch (error) {
      if (error instanceof UsageError) throw error;
      throw new BuildError(`building ${spec.output} from ${spec.source} failed: ${(error as Error).message}`);
    } finally {
      rmSync(wit, { recursive: true, force: true });
    }
  }
  return built;
}

/** A component that did not build (exit code 1, like a failed check). */
export class BuildError extends Error {}

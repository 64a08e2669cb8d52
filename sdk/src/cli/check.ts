import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { exportsToolRun, isComponentBinary } from "../contracts.js";
import { packedFiles } from "./npm.js";
import { type ToolPackage, UsageError } from "./package-config.js";
import { entryOf, resolvePackage } from "./resolve.js";

export interface CheckReport {
  /** One line per exported tool that passed. */
  passed: string[];
  /** One sentence per problem, naming the tool or file. */
  problems: string[];
}

interface ToolLike {
  name: string;
  component?: { url: URL };
}

/**
 * A tool factory, recognised by shape rather than by class: the package may load its own copy of
 * the SDK (another version, another path), whose WeakMaps and classes are not this one's.
 */
function isToolFactory(value: unknown): value is ToolLike {
  if (typeof value !== "function") return false;
  const t = value as unknown as Record<string, unknown>;
  return typeof t.description === "string" && typeof t.inputSchema === "object" && "outputSchema" in t;
}

/** The package-relative path, with "/", or undefined when it is outside the package. */
function inside(dir: string, file: string): string | undefined {
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : resolve(p));
  const rel = relative(real(dir), real(file));
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

type ComponentWit = (bytes: Uint8Array) => Promise<string>;

async function loadComponentWit(pkg: ToolPackage): Promise<ComponentWit> {
  const here = dirname(fileURLToPath(import.meta.url));
  const entry = resolvePackage("@bytecodealliance/jco", pkg.dir) ?? resolvePackage("@bytecodealliance/jco", here);
  if (!entry) {
    throw new UsageError(
      "checking components' worlds needs @bytecodealliance/jco: npm install --save-dev @bytecodealliance/jco",
    );
  }
  return (await import(entry.href)).componentWit as ComponentWit;
}

/** What the server's admission checks, on the file the package ships. */
async function componentProblem(file: string, componentWit: () => Promise<ComponentWit>): Promise<string | null> {
  const bytes = readFileSync(file);
  if (!isComponentBinary(bytes)) return "is not a WebAssembly component (a core module, or not WebAssembly)";
  let wit: string;
  try {
    wit = await (await componentWit())(bytes);
  } catch (error) {
    return `cannot be decoded: ${(error as Error).message}`;
  }
  return exportsToolRun(wit) ? null : "does not export brain:tool@0.2.0's run(invocation) (the brain:tool world)";
}

/**
 * Checks what a consumer of the packed package would get: the entry loads (declaring every tool,
 * so an unrepresentable schema fails here), every exported tool's component is a file inside the
 * tarball, and each such file is a component the server will admit.
 */
export async function checkPackage(pkg: ToolPackage): Promise<CheckReport> {
  const passed: string[] = [];
  const problems: string[] = [];
  const entry = entryOf(pkg.dir);
  if (!entry) throw new UsageError(`${pkg.name}'s package.json exports no "." entry to load the tools from.`);
  const files = await packedFiles(pkg.dir);
  const entryPath = fileURLToPath(entry);
  const entryRel = inside(pkg.dir, entryPath);
  if (!existsSync(entryPath)) {
    return { passed, problems: [`the entry ${entryRel ?? entryPath} does not exist: run the package's build first`] };
  }
  if (entryRel === undefined || !files.has(entryRel)) {
    problems.push(`the entry ${entryRel ?? entryPath} is not among the files npm pack includes`);
  }
  let exported: Record<string, unknown>;
  try {
    exported = await import(entry.href);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const what = code === "unrepresentable_schema" ? "a tool's schema is unrepresentable" : "it failed to load";
    return {
      passed,
      problems: [...problems, `the entry ${entryRel} cannot declare its tools (${what}): ${(error as Error).message}`],
    };
  }
  const tools = Object.entries(exported).filter((e): e is [string, ToolLike] => isToolFactory(e[1]));
  if (tools.length === 0) problems.push(`the entry ${entryRel} exports no tool() factories`);
  let witReader: Promise<ComponentWit> | undefined;
  const componentWit = () => {
    witReader ??= loadComponentWit(pkg);
    return witReader;
  };
  for (const [exportName, tool] of tools) {
    const label = `tool "${tool.name}" (export ${exportName})`;
    const url = tool.component?.url;
    if (url === undefined) {
      passed.push(`${label}: declared, schemas representable`);
      continue;
    }
    const file = fileURLToPath(url);
    const rel = inside(pkg.dir, file);
    if (rel === undefined) {
      problems.push(`${label}: its component ${file} is outside the package directory ${pkg.dir}`);
    } else if (!existsSync(file)) {
      problems.push(`${label}: its component ${rel} does not exist (run brain-tools build)`);
    } else if (!files.has(rel)) {
      problems.push(
        `${label}: its component ${rel} is not among the files npm pack includes (see "files" in package.json)`,
      );
    } else {
      const problem = await componentProblem(file, componentWit);
      if (problem) problems.push(`${label}: its component ${rel} ${problem}`);
      else passed.push(`${label}: component ${rel} is packed and exports brain:tool@0.2.0's run`);
    }
  }
  return { passed, problems };
}

// brain-tools check refuses packages that would not work once installed, with a message naming the
// tool and the fault and exit code 1; usage and configuration errors exit 2. Each package is real
// (a folder outside the repository, its dependencies linked in node_modules as npm would install
// them) and checked by the command as a user runs it, with npm pack's own file list.
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCommand } from "../../testkit/commands.js";
import { REPO_ROOT } from "../../testkit/server-process.js";

const CLI = join(REPO_ROOT, "sdk", "dist", "cli", "brain-tools.js");

/** The packages a tool package's code and build load, linked as an install would place them. */
const LINKED = {
  "@aexhq/brain": join(REPO_ROOT, "sdk"),
  zod: join(REPO_ROOT, "node_modules", "zod"),
  "@bytecodealliance/componentize-js": join(
    REPO_ROOT,
    "examples",
    "node_modules",
    "@bytecodealliance",
    "componentize-js",
  ),
};

/** A package folder `pkg` inside a fresh directory (so "../x" is outside it), with `files` in it. */
function toolPackage(manifest: Record<string, unknown>, files: Record<string, string>): string {
  const pkg = join(mkdtempSync(join(tmpdir(), "brain-tools-check-")), "pkg");
  for (const [name, target] of Object.entries(LINKED)) {
    mkdirSync(dirname(join(pkg, "node_modules", name)), { recursive: true });
    symlinkSync(realpathSync(target), join(pkg, "node_modules", name));
  }
  const all = { "package.json": JSON.stringify({ version: "1.0.0", type: "module", ...manifest }), ...files };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(pkg, path)), { recursive: true });
    writeFileSync(join(pkg, path), text);
  }
  return pkg;
}

const brainTools = (args: string[], cwd: string) => runCommand(process.execPath, [CLI, ...args], cwd);

describe("brain-tools check fails, naming the tool and the fault", () => {
  it("for executable references outside the package, outside its packed files, or not components", async () => {
    const pkg = toolPackage(
      { name: "refs", exports: "./index.js", files: ["index.js", "packed.wasm"] },
      {
        "index.js": `import { component, tool } from "@aexhq/brain";
import { z } from "zod";
const input = z.object({});
export const outside = tool({ name: "outside", description: "d", input, implementation: component(new URL("../outside.wasm", import.meta.url)) });
export const unpacked = tool({ name: "unpacked", description: "d", input, implementation: component(new URL("./unpacked.wasm", import.meta.url)) });
export const notComponent = tool({ name: "not_component", description: "d", input, implementation: component(new URL("./packed.wasm", import.meta.url)) });
export const fine = tool({ name: "fine", description: "d", input, run: () => null });`,
        "../outside.wasm": "\0asm",
        "unpacked.wasm": "\0asm",
        "packed.wasm": "\0asm\x01\0\0\0",
      },
    );
    const { code, stdout, stderr } = await brainTools(["check"], pkg);
    expect(code, stdout + stderr).toBe(1);
    expect(stdout).toContain(`ok  tool "fine" (export fine): declared, schemas representable`);
    expect(stderr).toContain("brain-tools check: refs is not ready to publish (3 problem(s)):");
    expect(stderr).toContain(
      `- tool "outside" (export outside): its component ${join(dirname(pkg), "outside.wasm")} is outside the package directory`,
    );
    expect(stderr).toContain(
      `- tool "unpacked" (export unpacked): its component unpacked.wasm is not among the files npm pack includes (see "files" in package.json)`,
    );
    expect(stderr).toContain(
      `- tool "not_component" (export notComponent): its component packed.wasm is not a WebAssembly component (a core module, or not WebAssembly)`,
    );
  }, 60_000);

  it("for a schema that JSON Schema cannot represent", async () => {
    const pkg = toolPackage(
      { name: "dates", exports: "./index.js" },
      {
        "index.js": `import { tool } from "@aexhq/brain";
import { z } from "zod";
export const when = tool({ name: "when", description: "d", input: z.object({ at: z.date() }), run: () => null });`,
      },
    );
    const { code, stdout, stderr } = await brainTools(["check"], pkg);
    expect(code, stdout + stderr).toBe(1);
    expect(stderr).toContain(
      "- the entry index.js cannot declare its tools (a tool's schema is unrepresentable): when: the input schema cannot be represented as JSON Schema",
    );
  }, 60_000);

  it("for a component that does not export the brain:tool world (built by brain-tools build)", async () => {
    const pkg = toolPackage(
      {
        name: "other-world",
        exports: "./index.js",
        brainTools: { components: [{ source: "hello.js", output: "hello.wasm", wit: "wit", world: "other" }] },
      },
      {
        "index.js": `import { component, tool } from "@aexhq/brain";
import { z } from "zod";
export const hello = tool({ name: "hello", description: "d", input: z.object({}), implementation: component(new URL("./hello.wasm", import.meta.url)) });`,
        "hello.js": `export function hello() { return "hi"; }`,
        "wit/world.wit": "package example:other;\n\nworld other {\n  export hello: func() -> string;\n}\n",
      },
    );
    const built = await brainTools(["build"], pkg);
    expect(built.code, built.stdout + built.stderr).toBe(0);
    expect(built.stdout).toContain("built hello.wasm from hello.js");
    const { code, stdout, stderr } = await brainTools(["check"], pkg);
    expect(code, stdout + stderr).toBe(1);
    expect(stderr).toContain(
      `- tool "hello" (export hello): its component hello.wasm does not export brain:tool@0.2.0's run(invocation) (the brain:tool world)`,
    );
  }, 180_000);
});

describe("brain-tools usage", () => {
  it("exits 2 with the usage for an unknown command, and 2 for a folder without package.json", async () => {
    const unknown = await brainTools(["publish"], tmpdir());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("usage: brain-tools <build|check|pack>");
    const empty = mkdtempSync(join(tmpdir(), "brain-tools-empty-"));
    const missing = await brainTools(["check", empty], tmpdir());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`brain-tools: ${empty} has no readable package.json`);
  }, 60_000);
});

import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// The shape CONTRIBUTING.md asks of the code, held: functions short enough to read at once in
// the runtime's packages, and no source file past 500 lines anywhere.
const root = fileURLToPath(new URL("../../..", import.meta.url));
const sources = execFileSync("git", ["ls-files", "*/src/*.ts", "*/src/**/*.ts"], { cwd: root, encoding: "utf8" })
  .split("\n")
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && existsSync(join(root, f)));

const MAX_FUNCTION_LINES = 85;
const MAX_FILE_LINES = 500;

function longFunctions(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (last - first + 1 > MAX_FUNCTION_LINES) found.push(`${file}:${first + 1} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe("the code's shape", () => {
  it(`no function in server/, worker/, db/, runtime-core/ or sdk/ is over ${MAX_FUNCTION_LINES} lines`, () => {
    const runtime = sources.filter((f) => /^(server|worker|db|runtime-core|sdk)\/src\//.test(f));
    expect(runtime.length).toBeGreaterThan(100);
    expect(runtime.flatMap(longFunctions)).toEqual([]);
  });

  it(`no source file is over ${MAX_FILE_LINES} lines`, () => {
    const long = sources.filter((f) => readFileSync(join(root, f), "utf8").split("\n").length > MAX_FILE_LINES);
    expect(long).toEqual([]);
  });
});

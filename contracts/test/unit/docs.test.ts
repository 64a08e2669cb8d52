import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The documentation is a README that points into docs/ pages by topic. These checks keep every
// page one click from the README and every relative link (and its #anchor) pointing at something.
const root = fileURLToPath(new URL("../../..", import.meta.url));
const pages = readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md"));
const documents = ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md", ...pages.map((p) => `docs/${p}`)];

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const heading = !fenced && /^#{1,6} (.+)$/.exec(line);
    if (heading)
      found.add(
        heading[1]!
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, "")
          .replaceAll(" ", "-"),
      );
  }
  return found;
}

function links(markdown: string): string[] {
  const outside = markdown.replace(/```[\s\S]*?```/g, "").replace(/`[^`\n]*`/g, "");
  return [...outside.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
}

describe("documentation", () => {
  it("the README links every docs/ page", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    for (const page of pages) expect(readme, page).toContain(`](docs/${page}`);
  });

  it("every relative link resolves, anchors included", () => {
    const broken: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(root, doc), "utf8");
      for (const link of links(text)) {
        const [path, anchor] = link.split("#") as [string, string | undefined];
        const target = path === "" ? join(root, doc) : join(root, dirname(doc), path);
        if (!existsSync(target)) broken.push(`${doc} → ${link}`);
        else if (anchor && !anchors(readFileSync(target, "utf8")).has(anchor)) broken.push(`${doc} → ${link}`);
        else if (!relative(root, target) || relative(root, target).startsWith("..")) broken.push(`${doc} → ${link}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("every source path the docs name exists (Where things live, and the rest)", () => {
    const missing: string[] = [];
    for (const doc of documents) {
      const text = readFileSync(join(root, doc), "utf8");
      for (const m of text.matchAll(/`([a-z][\w-]*\/[\w./-]+\.(?:ts|js|mjs|sql|json|wit))`/g)) {
        const path = m[1]!;
        if (!path.startsWith("bench/results/") && !existsSync(join(root, path))) missing.push(`${doc}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("the README's tool is examples/lookup's, which the SDK tarball test runs", () => {
    const readme = readFileSync(join(root, "README.md"), "utf8");
    const example = readFileSync(join(root, "examples", "lookup", "main.mjs"), "utf8");
    const declared = /export const lookup = tool\(\{[\s\S]*?\n\}\);/.exec(readme)?.[0];
    expect(declared).toBeDefined();
    expect(example).toContain(declared);
  });

  it("the README stays a front page: short, pointing into docs/", () => {
    const lines = readFileSync(join(root, "README.md"), "utf8").split("\n").length;
    expect(lines).toBeLessThan(300);
  });
});

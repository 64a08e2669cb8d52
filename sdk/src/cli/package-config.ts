import { readFileSync } from "node:fs";
import { join } from "node:path";
import { issuesText } from "@aexhq/brain-contracts";
import { z } from "zod";

/** A usage or configuration error: the command cannot even start (exit code 2). */
export class UsageError extends Error {}

const ComponentSpec = z.strictObject({
  /** The JavaScript module componentize-js builds, relative to the package. */
  source: z.string().min(1),
  /** Where the .wasm goes, relative to the package; the declaration's component(new URL(...)) names it. */
  output: z.string().min(1),
  /** A WIT directory with a world of your own (it imports WASI, say); brain:tool is added to its deps. */
  wit: z.string().min(1).optional(),
  /** The world to build; "tool" (brain:tool's own) unless `wit` says otherwise. */
  world: z.string().min(1).optional(),
  /** componentize-js features left out; Brain's worker offers neither outbound HTTP nor a fetch handler. */
  disableFeatures: z.array(z.string()).optional(),
});

const BrainToolsConfig = z.strictObject({ components: z.array(ComponentSpec).default([]) });

export type ComponentSpec = z.infer<typeof ComponentSpec>;

export interface ToolPackage {
  dir: string;
  name: string;
  manifest: Record<string, unknown>;
  components: ComponentSpec[];
}

/** The package in `dir`: its package.json and the `brainTools` section that says what to build. */
export function readToolPackage(dir: string): ToolPackage {
  let manifest: Record<string, unknown>;
  try {
    manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  } catch (error) {
    throw new UsageError(`${dir} has no readable package.json: ${(error as Error).message}`);
  }
  const parsed = BrainToolsConfig.safeParse(manifest.brainTools ?? {});
  if (!parsed.success) {
    const issues = issuesText(parsed.error, { prefix: "brainTools.", separator: "\n  " });
    throw new UsageError(`package.json's "brainTools" is malformed:\n  ${issues}`);
  }
  return {
    dir,
    name: typeof manifest.name === "string" ? manifest.name : dir,
    manifest,
    components: parsed.data.components,
  };
}

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { type Env, type NodeProcess, spawnNode } from "../../testkit/server-process.js";

export const BRAIN = "cli/dist/main.js";

export interface BrainRun {
  code: number | null;
  /** stdout and stderr interleaved. */
  output: string;
}

const dirs: string[] = [];
// A file-level hook of every test file that imports this module.
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data directory of its own (removed after the test file), so no test reads a developer's saved token. */
export function emptyDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "brain-cli-"));
  dirs.push(dir);
  return dir;
}

/** `brain <args>` as a real process, to its exit. */
export async function brain(args: string[], env: Env, timeoutMs = 30_000): Promise<BrainRun> {
  const p = spawnBrainCli(args, env);
  const timer = setTimeout(() => p.child.kill("SIGKILL"), timeoutMs);
  const { code } = await p.exited;
  clearTimeout(timer);
  // "exit" can come before the pipes are drained.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) =>
    p.child.stdout?.readableEnded ? resolve() : p.child.stdout?.once("end", resolve),
  );
  return { code, output: p.output() };
}

/** `brain <args>` left running (start, worker, sessions tail). */
export function spawnBrainCli(args: string[], env: Env): NodeProcess {
  return spawnNode(BRAIN, {
    args,
    env: { BRAIN_DATA_DIR: emptyDataDir(), BRAIN_URL: undefined, BRAIN_TOKEN: undefined, ...env },
  });
}

/** The JSON document a `--json` command printed. */
export function json<T = unknown>(run: BrainRun): T {
  return JSON.parse(run.output) as T;
}

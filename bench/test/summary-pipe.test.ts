import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";

// The profile summaries are read through `head` as often as not: a reader that stops early must
// end them quietly, not with an unhandled EPIPE and exit code 1.

const dir = mkdtempSync(join(tmpdir(), "brain-summary-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A profile of `n` functions, enough output to outlast a pipe's buffer. */
function profile(kind: "heap" | "cpu", n: number): string {
  const frame = (i: number) => ({
    functionName: `f${i}`,
    url: `file:///x/node_modules/p${i}/a.js`,
    scriptId: String(i),
    lineNumber: i,
    columnNumber: 0,
  });
  const file = join(dir, `p.${kind}profile`);
  const body =
    kind === "heap"
      ? {
          head: {
            callFrame: frame(-1),
            selfSize: 0,
            children: Array.from({ length: n }, (_, i) => ({ callFrame: frame(i), selfSize: 1000 + i })),
          },
        }
      : {
          nodes: [
            { id: 1, callFrame: frame(-1), children: Array.from({ length: n }, (_, i) => i + 2) },
            ...Array.from({ length: n }, (_, i) => ({ id: i + 2, callFrame: frame(i) })),
          ],
          startTime: 0,
          endTime: n * 1000,
          samples: Array.from({ length: n }, (_, i) => i + 2),
          timeDeltas: Array.from({ length: n }, () => 1000),
        };
  writeFileSync(file, JSON.stringify(body));
  return file;
}

/** Runs a summary, reads its first chunk and closes the pipe: its exit code and stderr. */
function readHead(script: string, file: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [`bench/dist/probes/${script}`, file, "100000"], { stdio: "pipe" });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.stdout.once("data", () => child.stdout.destroy());
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

it.each([
  ["alloc-summary.js", "heap"],
  ["profile-summary.js", "cpu"],
] as const)(
  "%s ends with status 0 when its reader closes the pipe early",
  async (script, kind) => {
    const { code, stderr } = await readHead(script, profile(kind, 20_000));
    expect(stderr).toBe("");
    expect(code).toBe(0);
  },
  30_000,
);

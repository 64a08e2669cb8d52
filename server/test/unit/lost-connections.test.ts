import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../../testkit/server-process.js";

// A connection lost under a query nobody awaited rejects that query with the socket's error; the
// server must log it and go on, where Node would end the process. Any other unhandled rejection
// still ends it. Each case runs in a process of its own, with the server's signal handling.

function runWith(rejection: string): { status: number | null; stderr: string; stdout: string } {
  const script = `
    import { exitOnSignals } from "./server/dist/run.js";
    exitOnSignals((m) => process.stderr.write("brain: " + m + "\\n"));
    Promise.reject(${rejection});
    setTimeout(() => { process.stdout.write("alive"); process.exit(0); }, 200);`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: REPO_ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  return { status: child.status, stderr: child.stderr, stdout: child.stdout };
}

describe("an unhandled rejection in a server process", () => {
  it("from a lost connection is logged, and the process goes on", () => {
    const run = runWith(`Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" })`);
    expect(run.stdout).toBe("alive");
    expect(run.status).toBe(0);
    expect(run.stderr).toContain("a database connection was lost under a query nobody awaited (ECONNRESET)");
  });

  it("of anything else still ends the process", () => {
    const run = runWith(`new TypeError("a bug")`);
    expect(run.stdout).toBe("");
    expect(run.status).toBe(1);
    expect(run.stderr).toContain("a bug");
  });
});

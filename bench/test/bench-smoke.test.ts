import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, inject, it } from "vitest";

// The suite never asserts timings: this only checks that `--quick` runs end to end (a real server
// and host process, a real Postgres) and writes well-formed JSON.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "brain-bench-smoke-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bench/dist/run.js"), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c));
    child.stderr.on("data", (c: Buffer) => (output += c));
    child.once("exit", (code) => resolve({ code, output }));
  });
}

describe("npm run bench -- --quick", () => {
  it("tells a mistake on the command line in one line with the usage, and exits 2", async () => {
    for (const args of [["--help"], ["--rounds", "x"], ["--only", "no_such_scenario"], ["--server", "x"]]) {
      const { code, output } = await run(args, {});
      expect(code, output).toBe(2);
      expect(output).toMatch(/^bench: .+\nusage: npm run bench /);
      expect(output).not.toMatch(/\n\s+at /);
    }
  });

  it("runs a short subset and writes well-formed JSON", { timeout: 180_000 }, async () => {
    const out = join(dir, "latest.json");
    const { code, output } = await run(
      ["--quick", "--only", "floor_commit,floor_journal,floor_stack,floor_stack_journal,turn_text", "--out", out],
      {
        DATABASE_URL: inject("brainAdminUrl"),
      },
    );
    expect(code, output).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      date: string;
      machine: { cpus: number; cpuModel: string; node: string; gitCommit: string };
      postgres: { version: string; fsync: string };
      figures: Record<string, unknown>[];
      targets: {
        target: string;
        measured: string;
        met: boolean | null;
        stack?: { measured: string };
        journal?: { measured: string };
      }[];
      ratios: { name: string; value: number }[];
      errors: unknown[];
    };
    expect(Number.isNaN(Date.parse(report.date))).toBe(false);
    expect(report.machine.cpus).toBeGreaterThan(0);
    expect(report.machine.cpuModel).not.toBe("");
    expect(report.machine.node).toMatch(/^v\d+/);
    expect(report.postgres.version).toMatch(/^\d+/);
    expect(report.errors).toEqual([]);
    const names = report.figures.map((f) => f.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "floor_commit",
        "floor_commit.notify_c8",
        "floor_journal.append",
        "floor_journal.append_3",
        "floor_journal.emit",
        "turn_text",
        "floor_stack.turn_text",
        "floor_stack.dispatch",
        "floor_stack.call_roundtrip",
        "floor_stack.emit",
        "floor_stack.throughput",
        "floor_stack_journal.turn_text",
        "floor_stack_journal.dispatch",
        "floor_stack_journal.call_roundtrip",
        "floor_stack_journal.emit",
        "floor_stack_journal.throughput",
      ]),
    );
    for (const figure of report.figures) {
      expect(typeof figure.name).toBe("string");
      expect(typeof figure.unit).toBe("string");
      expect(figure.n).toBeGreaterThan(0);
      if (figure.kind === "latency") {
        for (const key of ["p50", "p90", "p99", "max"]) expect(typeof figure[key]).toBe("number");
        expect(figure.p50 as number).toBeLessThanOrEqual(figure.p99 as number);
        expect(figure.p99 as number).toBeLessThanOrEqual(figure.max as number);
      } else if (figure.kind === "rate") {
        expect(figure.rate).toBeGreaterThan(0);
      } else {
        expect(figure.kind).toBe("value");
      }
    }
    // Each stack's round trips are read back from its journal, one for every measured dispatch.
    const n = (name: string) => report.figures.find((f) => f.name === name)?.n;
    for (const stack of ["floor_stack", "floor_stack_journal"]) {
      expect(n(`${stack}.call_roundtrip`)).toBe(n(`${stack}.dispatch`));
    }
    // Brain's journal commit alone, beside the physical floor: the text turn is read against both.
    const ratioNames = report.ratios.map((r) => r.name);
    expect(ratioNames).toEqual(expect.arrayContaining(["floor_journal ÷ floor_commit", "turn_text ÷ floor_journal"]));
    expect(report.targets.length).toBeGreaterThan(0);
    // The text-turn target, measured on Brain and on the bare stack in the same run.
    const turn = report.targets.find((t) => t.target.startsWith("turn_text p50"));
    expect(turn?.measured).toMatch(/×$/);
    expect(turn?.stack?.measured).toMatch(/×$/);
    // And on the stack writing Brain's journal: throughput and CPU too.
    expect(turn?.journal?.measured).toMatch(/×$/);
    const cpu = report.targets.find((t) => t.target.startsWith("CPU per tool call"));
    expect(cpu?.journal?.measured).toMatch(/ ms$/);
  });

  it("runs the DBOS Transact baseline and judges Brain against it", { timeout: 120_000 }, async () => {
    const out = join(dir, "dbos.json");
    const { code, output } = await run(["--quick", "--only", "dbos_roundtrip", "--out", out], {
      DATABASE_URL: inject("brainAdminUrl"),
    });
    expect(code, output).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as {
      figures: { name: string; n: number }[];
      targets: { target: string; measured: string }[];
      errors: unknown[];
    };
    expect(report.errors).toEqual([]);
    const byName = new Map(report.figures.map((f) => [f.name, f]));
    for (const name of ["dbos_roundtrip", "dbos_roundtrip.throughput", "dbos_roundtrip.under_load"]) {
      expect(byName.get(name)?.n, name).toBeGreaterThan(0);
    }
    // Without Brain's figures in the run, its targets against DBOS are listed, not judged.
    expect(report.targets.find((t) => t.target === "tool_throughput ≥ 1 × dbos_roundtrip.throughput")?.measured).toBe(
      "not measured",
    );
  });

  it("--server start measures Brain as npm start runs it: a server with its in-process worker", {
    timeout: 120_000,
  }, async () => {
    const out = join(dir, "start.json");
    const { code, output } = await run(["--quick", "--only", "turn_text", "--server", "start", "--out", out], {
      DATABASE_URL: inject("brainAdminUrl"),
      BENCH_VERBOSE: "1",
    });
    expect(code, output).toBe(0);
    // The server's banner, then brain start's line for its worker (forwarded with BENCH_VERBOSE).
    expect(output).toMatch(/^Worker: in-process/m);
    const report = JSON.parse(readFileSync(out, "utf8")) as { server: string; figures: { name: string }[] };
    expect(report.server).toBe("start");
    expect(report.figures.map((f) => f.name)).toContain("turn_text");
  });

  it("--trace-hops records the server's and the host's hops and reports the steps of a sequential path", {
    timeout: 120_000,
  }, async () => {
    const out = join(dir, "hops.json");
    const { code, output } = await run(["--quick", "--only", "tool_dispatch", "--trace-hops", "--out", out], {
      DATABASE_URL: inject("brainAdminUrl"),
    });
    expect(code, output).toBe(0);
    const report = JSON.parse(readFileSync(out, "utf8")) as { figures: { name: string; n: number; p50: number }[] };
    const step = (name: string) => report.figures.find((f) => f.name === `tool_dispatch hop · ${name}`);
    // A step inside the server, one inside the host, and the socket between them: both probes
    // wrote their hops, and the line-up put the host's after the server's that caused them.
    for (const name of [
      "server:writer.batch-sent → server:writer.batch-committed",
      "host:sdk.frame-received → host:sdk.frame-parsed",
      "server:server.invoke-sent → host:sdk.frame-received",
    ]) {
      expect(step(name), name).toBeDefined();
      expect(step(name)!.n).toBeGreaterThan(0);
      expect(step(name)!.p50).toBeGreaterThanOrEqual(0);
    }
  });

  it("--alloc-prof writes what the server and the host allocated in the window, and alloc-summary reads it", {
    timeout: 120_000,
  }, async () => {
    const profiles = join(ROOT, "bench/results/profiles");
    const files = ["server-turn_text", "host-turn_text"].map((name) => join(profiles, `${name}.heapprofile`));
    for (const file of files) rmSync(file, { force: true });
    const out = join(dir, "alloc.json");
    const { code, output } = await run(["--quick", "--only", "turn_text", "--alloc-prof", "--out", out], {
      DATABASE_URL: inject("brainAdminUrl"),
    });
    expect(code, output).toBe(0);
    for (const file of files) {
      expect(existsSync(file), file).toBe(true);
      const head = (JSON.parse(readFileSync(file, "utf8")) as { head: { children: unknown[] } }).head;
      expect(head.children.length).toBeGreaterThan(0);
      const window = JSON.parse(readFileSync(`${file}.window.json`, "utf8")) as { seconds: number };
      expect(window.seconds).toBeGreaterThan(0);
      const summary = execFileSync(
        process.execPath,
        [join(ROOT, "bench/dist/probes/alloc-summary.js"), file, "5", "--per-second", "100"],
        {
          encoding: "utf8",
        },
      );
      // Some megabytes in a window of text turns, and the server's own code among the allocators.
      expect(summary).toMatch(/: \d+\.\d MB allocated in \d+\.\d s, .* KiB per unit at 100\/s/);
      if (file.includes("server-")) expect(summary).toMatch(/brain\/(server|db)/);
      else expect(summary).toMatch(/brain\/sdk/);
    }
  });
});

// A package of tools taken through publishing as its author does (`npx brain-tools pack`: build the
// component from JavaScript, check, npm pack), installed from the tarball into an empty application
// as a user does, and used there in a session against a real Brain server and worker process.
// The SDK is not on the registry yet, so it is installed from the `npm pack` tarball of sdk/
// (testkit/pack.ts).
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { spawnBrainWithWorker } from "../../testkit/brain-with-worker.js";
import { runOk } from "../../testkit/commands.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { packSdk } from "../../testkit/pack.js";
import { REPO_ROOT } from "../../testkit/server-process.js";
import { printedJournal, runExample } from "./support.js";

const work = mkdtempSync(join(tmpdir(), "brain-published-"));
const tarballs = join(work, "tarballs");
const app = join(work, "app");
const example = join(REPO_ROOT, "examples", "published-tool");
let packOutput = "";

beforeAll(async () => {
  packOutput = await runOk("npx", ["--no", "brain-tools", "pack", "--pack-destination", tarballs], example);
  await packSdk(tarballs);
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  const files = readdirSync(tarballs).map((f) => join(tarballs, f));
  await runOk("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...files], app);
  copyFileSync(join(example, "main.mjs"), join(app, "main.mjs"));
}, 300_000);

const brain = startedBeforeAll(() => spawnBrainWithWorker(), { timeoutMs: 120_000 });

it("builds, checks and packs the package: the tarball holds the entry and the built component", async () => {
  expect(packOutput).toContain("built components/word-count.wasm from components/word-count.js");
  expect(packOutput).toContain(`ok  tool "word_count" (export wordCount): component components/word-count.wasm`);
  expect(packOutput).toContain(`ok  tool "greet" (export greet)`);
  expect(packOutput.trim().split("\n").at(-1)).toBe(join(tarballs, "aexhq-brain-example-tools-0.1.0.tgz"));
  const listed = await runOk("tar", ["tzf", "aexhq-brain-example-tools-0.1.0.tgz"], tarballs);
  expect(listed.trim().split("\n").sort()).toEqual([
    "package/components/word-count.wasm",
    "package/index.js",
    "package/package.json",
  ]);
});

it("runs a session with the tools imported from the installed package", async () => {
  const { out, lines } = await runExample(brain, join(app, "main.mjs"));
  expect(out).toContain(`tools from file://${join(app, "node_modules", "@aexhq", "brain-example-tools", "index.js")}`);
  expect(lines).toContain("done");
  const journal = printedJournal(lines);
  const started = new Map(
    journal.filter((r) => r.kind === "tool_call_started").map((r) => [r.seq, r.payload.tool as string]),
  );
  const outcomes = Object.fromEntries(
    journal
      .filter((r) => r.kind === "tool_call_ended")
      .map((r) => [started.get(r.payload.call as number), r.payload.outcome]),
  );
  expect(outcomes).toEqual({
    word_count: { status: "ok", value: { words: 4 } },
    greet: { status: "ok", value: { text: "Welcome, Ada!" } },
  });
}, 120_000);

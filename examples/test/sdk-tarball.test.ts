// The SDK as a user gets it: `npm run pack:sdk` (scripts/pack.mjs), then that one
// tarball and zod from the registry installed into an empty directory (nothing else of this
// repository), and the README's lookup example run from there against a real Brain server process.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, expect, it } from "vitest";
import { spawnBrain } from "../../testkit/brain.js";
import { runOk } from "../../testkit/commands.js";
import { startedBeforeAll } from "../../testkit/fixtures.js";
import { packSdk } from "../../testkit/pack.js";
import { REPO_ROOT } from "../../testkit/server-process.js";
import { printedJournal, runExample } from "./support.js";

const work = mkdtempSync(join(tmpdir(), "brain-sdk-tarball-"));
const app = join(work, "app");
const checkout = (file: string) => readFileSync(join(REPO_ROOT, "sdk", "dist", file), "utf8");
const before = { js: "", dts: "" };

beforeAll(async () => {
  before.js = checkout("contracts.js");
  before.dts = checkout("contracts.d.ts");
  const tarball = await packSdk(join(work, "tarballs"));
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  await runOk("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", tarball, "zod@^4.1.0"], app);
  copyFileSync(join(REPO_ROOT, "examples", "lookup", "main.mjs"), join(app, "main.mjs"));
}, 300_000);

const brain = startedBeforeAll(() => spawnBrain());

it("installs alone: no workspace package among its dependencies, zod a peer, contracts carried inside", async () => {
  const installed = join(app, "node_modules", "@aexhq", "brain");
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
  expect(Object.keys(manifest.dependencies ?? {})).toEqual(["ws"]);
  expect(manifest.peerDependencies).toEqual({ zod: "^4.1.0" });
  expect(manifest.license).toBe("Apache-2.0");
  expect(existsSync(join(installed, "LICENSE"))).toBe(true);
  expect(existsSync(join(installed, "dist", "vendor", "brain-contracts", "index.js"))).toBe(true);
  expect(existsSync(join(app, "node_modules", "@aexhq", "brain-contracts"))).toBe(false);
  expect(readFileSync(join(installed, "dist", "contracts.js"), "utf8")).toContain("./vendor/brain-contracts/index.js");
  // Packing never rewrites the checkout: its SDK still imports the workspace package, byte for byte.
  expect({ js: checkout("contracts.js"), dts: checkout("contracts.d.ts") }).toEqual(before);
  expect(checkout("contracts.js")).toContain('"@aexhq/brain-contracts"');
  expect(existsSync(join(REPO_ROOT, "sdk", "dist", "vendor"))).toBe(false);
});

it("runs the README's lookup example from the installed tarball", async () => {
  const { lines } = await runExample(brain, join(app, "main.mjs"));
  expect(lines[0]).toBe("done");
  const call = printedJournal(lines).find((r) => r.kind === "tool_call_started");
  expect(call?.payload).toMatchObject({ tool: "lookup", input: { id: "42" } });
  const ended = printedJournal(lines).find((r) => r.kind === "tool_call_ended");
  expect(ended?.payload.outcome).toEqual({ status: "ok", value: { value: "Ada Lovelace" } });
}, 60_000);

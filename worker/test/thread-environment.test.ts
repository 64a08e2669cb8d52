// Finding 7 of the tenant review: component threads inherited the worker's environment
// (DATABASE_URL, BRAIN_SECRET_KEY). A thread is now started with none: code running in it (the
// transpiled glue, the sandbox) cannot read the worker's secrets from process.env.
import { randomUUID } from "node:crypto";
import { pathToFileURL } from "node:url";
import { expect, it } from "vitest";
import { spawnThread } from "../dist/spare-threads.js";
import { startThread } from "../dist/thread-runner.js";
import { captureLog } from "./support.js";

it("starts a component's thread with an empty environment, whatever the worker's holds", async () => {
  process.env.DATABASE_URL ??= "postgres://user:secret@db.example/brain";
  process.env.BRAIN_SECRET_KEY ??= "0".repeat(64);
  const component = {
    sha256: randomUUID(),
    componentUrl: pathToFileURL(new URL("./fixtures/env-probe.mjs", import.meta.url).pathname).href,
    modules: {},
    imports: [],
    exports: ["run"],
    transpiled: false,
  };
  const reporter = {} as Parameters<typeof startThread>[2];
  const invoke = { invocation: { input: "{}", options: "{}", deadlineAtMs: 0 }, workspaceDir: null };
  const thread = startThread(spawnThread(component), invoke, reporter, captureLog().logger, 0);
  const end = await thread.ended;
  expect(end).toMatchObject({ how: "trap", message: "[]" });
});

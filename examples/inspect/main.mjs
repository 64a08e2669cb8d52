// The seed's inspect tool: a WebAssembly component (inspect.js, built by build.mjs) run by Brain's
// worker, with the session's workspace granted read-only through its Environment.
// Run: npm run example -- inspect   (starts a Brain, with its worker, unless BRAIN_URL and
// BRAIN_TOKEN are set; then a worker must be running against that Brain's database: npm run worker)
import { existsSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Brain, brainEnv, component, tool } from "@aexhq/brain";
import { z } from "zod";

const wasm = new URL("./inspect.wasm", import.meta.url);

// Built from source on first use (and again when the source changes): builds are not
// byte-reproducible, so the repository keeps the source, not the binary.
const sources = ["./inspect.js", "./build.mjs"].map(
  (s) => statSync(fileURLToPath(new URL(s, import.meta.url))).mtimeMs,
);
if (!existsSync(wasm) || statSync(wasm).mtimeMs < Math.max(...sources)) {
  console.error("building inspect.wasm with componentize-js (once, ~15 s)...");
  await (await import("./build.mjs")).build(fileURLToPath(wasm));
}

export const inspect = tool({
  name: "inspect",
  description: "Inspect one path.",
  input: z.object({ path: z.string() }),
  options: z.object({ depth: z.number().int().positive() }),
  implementation: component(wasm),
});

const placed = inspect({ env: brainEnv({ name: "reader", filesystem: { workspace: "read" } }), depth: 2 });

const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
try {
  const session = await brain.sessions.create({
    model: {
      provider: "scripted",
      script: [{ toolCalls: [{ name: "inspect", input: { path: "." } }] }, { text: "done" }],
    },
    tools: [placed],
    // The session's workspace: stored in Brain's database, copied read-only for each invocation.
    workspace: {
      "README.md": "# demo\n",
      "src/index.ts": "export const answer = 42;\n",
      "src/lib/util.ts": "export {};\n",
      "src/lib/deep/hidden.ts": "// below depth 2\n",
    },
  });
  console.log(await session.send("what is in the workspace?"));
  for await (const e of session.events({ after: 0, follow: false })) {
    console.log(e.sequence, e.kind, JSON.stringify(e.payload));
  }
  console.log(
    `\nThe same journal in SQL:\n  SELECT seq, kind, payload FROM brain.journal WHERE session_id = '${session.id}' ORDER BY seq;`,
  );
} finally {
  await brain.close();
}

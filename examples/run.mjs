// npm run example -- <name>: runs examples/<name>/main.mjs against BRAIN_URL/BRAIN_TOKEN, or, when
// they are not set, against a Brain started for the occasion (DATABASE_URL or embedded), as
// `npm start` runs it: a server and a component worker.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const name = process.argv[2];
const script = name && join(here, name, "main.mjs");
if (!script || !existsSync(script)) {
  console.error(`usage: npm run example -- <name>   (one of the folders in ${here})`);
  process.exit(2);
}

function run(env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...process.argv.slice(3)], { stdio: "inherit", env });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

if (process.env.BRAIN_URL && process.env.BRAIN_TOKEN) {
  process.exit(await run(process.env));
}

const token = `example-${randomBytes(16).toString("hex")}`;
const server = spawn(process.execPath, [join(here, "..", "cli", "bin", "brain.js"), "start"], {
  env: {
    ...process.env,
    BRAIN_PORT: "0",
    BRAIN_API_TOKEN: token,
    BRAIN_LOG_LEVEL: "warn",
    // The examples serve their tools, MCP servers and Environments on loopback.
    BRAIN_EGRESS_ALLOW: process.env.BRAIN_EGRESS_ALLOW ?? "localhost,127.0.0.0/8,::1",
    BRAIN_DATA_DIR:
      process.env.BRAIN_DATA_DIR ?? (process.env.DATABASE_URL ? mkdtempSync(join(tmpdir(), "brain-ex-")) : ".brain"),
  },
  stdio: ["ignore", "pipe", "inherit"],
});
const url = await new Promise((resolve, reject) => {
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    const m = /^Brain listening on (\S+)$/m.exec(out);
    if (m) resolve(m[1]);
  });
  server.on("exit", (code) => reject(new Error(`server exited with ${code}:\n${out}`)));
});
console.error(`(started a Brain at ${url} for this example)`);
const code = await run({ ...process.env, BRAIN_URL: url, BRAIN_TOKEN: token });
server.kill("SIGTERM");
await new Promise((r) => server.on("exit", r));
process.exit(code);

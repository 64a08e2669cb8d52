// The application reattachment recipe. Phase "start" creates a session whose tool keeps working
// in the background and saves what a later process needs (the session id and the host
// credentials). It is then killed with SIGKILL. Phase "resume", a new process, reattaches the
// same tools with the saved credentials and the session goes on.
//
//   npm run example -- reattach          runs both phases, killing the first for real
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Brain, tool } from "@aexhq/brain";
import { z } from "zod";

const stateFile = process.env.REATTACH_STATE ?? join(tmpdir(), `brain-reattach-${process.pid}.json`);

// The tool: it returns at once (so the turn can end) and reports progress until done.
export const longJob = tool({
  name: "long_job",
  description: "Runs a long job in the background.",
  input: z.object({ steps: z.number().int().positive() }),
  run: async ({ steps }, ctx) => {
    void (async () => {
      for (let i = 1; i <= steps && !ctx.signal.aborted; i++) {
        await new Promise((r) => setTimeout(r, 200));
        await ctx.emit("job_progress", { step: i, of: steps, pid: process.pid });
      }
      if (!ctx.signal.aborted) await ctx.finish({ done: steps }, { content: `The job finished ${steps} steps.` });
    })().catch(() => {});
  },
});

const script = [
  { toolCalls: [{ name: "long_job", input: { steps: 1000 } }] },
  { text: "Started the job; it runs in the background." },
  { text: "The job's host was lost; its outcome is unknown." },
  { toolCalls: [{ name: "long_job", input: { steps: 3 } }] },
  { text: "Restarted it on the new host." },
  { text: "The job finished." },
];

async function start() {
  const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
  const session = await brain.sessions.create({ model: { provider: "scripted", script }, tools: [longJob()] });
  console.log(`[start ${process.pid}] ${await session.send("run the long job")}`);
  // Saved as JSON: the credentials are the host's id and token; keep them as you keep secrets.
  writeFileSync(stateFile, JSON.stringify({ sessionId: session.id, credentials: brain.credentials() }), {
    mode: 0o600,
  });
  console.log("STARTED");
  // Keep running (the job emits progress) until killed.
  await new Promise(() => {});
}

async function resume() {
  const { sessionId, credentials } = JSON.parse(readFileSync(stateFile, "utf8"));
  const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN, credentials });
  try {
    const session = await brain.sessions.get(sessionId, { tools: [longJob()] });
    // The killed process's call ended `unknown`; the Agentloop already told the model so.
    await waitForText(session, "The job's host was lost; its outcome is unknown.");
    console.log(`[resume ${process.pid}] ${await session.send("start it again")}`);
    await waitForText(session, "The job finished.");
    for await (const e of session.events({ after: 0 })) {
      const p = e.payload;
      console.log(e.sequence, e.kind, p?.outcome ? JSON.stringify(p.outcome) : p?.text ? JSON.stringify(p.text) : "");
    }
  } finally {
    await brain.close();
  }
}

async function waitForText(session, text) {
  for await (const e of session.events({ after: 0, follow: true })) {
    if (e.kind === "activation_ended" && e.payload.text === text) return;
  }
}

async function both() {
  mkdirSync(tmpdir(), { recursive: true });
  const self = fileURLToPath(import.meta.url);
  const env = { ...process.env, REATTACH_STATE: stateFile };
  const first = spawn(process.execPath, [self, "start"], { env, stdio: ["ignore", "pipe", "inherit"] });
  await new Promise((resolve, reject) => {
    first.stdout.on("data", (d) => {
      process.stdout.write(d);
      if (String(d).includes("STARTED")) resolve();
    });
    first.on("exit", (code) => reject(new Error(`the first process exited early (${code})`)));
  });
  await new Promise((r) => setTimeout(r, 500));
  first.kill("SIGKILL");
  console.log(`[example] killed the first process (${first.pid}) with SIGKILL`);
  const second = spawn(process.execPath, [self, "resume"], { env, stdio: "inherit" });
  const code = await new Promise((resolve) => second.on("exit", resolve));
  process.exit(code ?? 1);
}

const phase = process.argv[2] ?? "both";
await { start, resume, both }[phase]();

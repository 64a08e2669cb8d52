// Named hosts: a frontend creates sessions; separate application processes serve their tools.
// Phase "replica" serves the named host "app" until stopped; the default phase (the frontend)
// starts two replicas, creates a session whose `lookup` runs in the named host, and shows that
// the calls of one turn were spread over both.
//
//   npm run example -- named-hosts
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Brain, hostEnv, tool } from "@aexhq/brain";
import { z } from "zod";

// The same declaration in the frontend and the replicas: the contract both sides agree on.
export const lookup = tool({
  name: "lookup",
  description: "Look up one record.",
  input: z.object({ id: z.string() }),
  output: z.object({ value: z.string(), servedBy: z.number() }),
  options: z.object({ prefix: z.string() }),
  run: async ({ id }, ctx) => {
    // A little work, so that the turn's calls overlap and each replica takes its share.
    await new Promise((resolve) => setTimeout(resolve, 300));
    return ctx.finish({ value: `${ctx.options.prefix}${id}`, servedBy: process.pid });
  },
});

async function replica() {
  const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
  // The replica's own options apply to the calls it serves.
  await brain.hosts.serve({ name: "app", tools: [lookup({ prefix: "customer:" })] });
  console.log(`[replica ${process.pid}] serving the named host "app"`);
  process.on("SIGTERM", () => brain.close().then(() => process.exit(0)));
}

async function frontend() {
  const self = fileURLToPath(import.meta.url);
  const replicas = [0, 1].map(() =>
    spawn(process.execPath, [self, "replica"], { stdio: ["ignore", "pipe", "inherit"] }),
  );
  await Promise.all(
    replicas.map(
      (child) =>
        new Promise((resolve, reject) => {
          child.stdout.on("data", (d) => {
            process.stdout.write(d);
            if (String(d).includes("serving")) resolve();
          });
          child.on("exit", (code) => reject(new Error(`a replica exited early (${code})`)));
        }),
    ),
  );
  const brain = new Brain({ url: process.env.BRAIN_URL, token: process.env.BRAIN_TOKEN });
  try {
    const ids = ["1", "2", "3", "4"];
    const session = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [{ toolCalls: ids.map((id) => ({ name: "lookup", input: { id } })) }, { text: "looked up 4 records" }],
      },
      // The frontend serves nothing: these calls go to whichever replicas serve "app".
      tools: [lookup({ env: hostEnv({ name: "app" }), prefix: "customer:" })],
    });
    console.log(`[frontend ${process.pid}] ${await session.send("find customers 1 to 4")}`);
    const servedBy = new Set();
    for await (const e of session.events({ after: 0 })) {
      if (e.kind !== "tool_call_ended") continue;
      const { value } = e.payload.outcome;
      servedBy.add(value.servedBy);
      console.log(`call ${e.payload.call}: ${value.value} served by process ${value.servedBy}`);
    }
    console.log(`SERVED BY ${servedBy.size} REPLICAS`);
  } finally {
    await brain.close();
    for (const child of replicas) child.kill("SIGTERM");
  }
}

await (process.argv[2] === "replica" ? replica() : frontend());

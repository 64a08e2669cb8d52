import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Brain, brainEnv, component, type ScriptStep, tool } from "@aexhq/brain";
import { z } from "zod";
import { latency } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import { track } from "../runner/proc.js";

/**
 * Cold and warm end-to-end latency of a component tool: `session.send()` → answer for a turn that
 * calls one component (which finishes at once), through the server, a pg-boss job and a separate
 * worker process (`node worker/dist/main.js`) with an empty transpile cache. Cold is the first call
 * of a component the worker has never seen (jco transpile, compile, instantiate); warm calls are
 * spaced 150 ms apart, the way an agent's turns arrive, so the worker's pre-instantiated spare
 * thread is ready; back-to-back calls are reported separately.
 */
export const componentCall: Scenario = {
  name: "component_call",
  run: (ctx) =>
    withBrain(ctx, "component_call", {}, async (brain) => {
      const dir = mkdtempSync(join(tmpdir(), "brain-bench-component-"));
      const wasm = join(dir, "script.wasm");
      ctx.log("  building the test component with componentize-js (~10 s)");
      execFileSync(process.execPath, [join(ctx.root, "worker/test/fixtures/build.mjs"), "script", wasm], {
        cwd: ctx.root,
        stdio: "ignore",
      });
      const worker = spawn(process.execPath, [join(ctx.root, "worker/dist/main.js")], {
        cwd: ctx.root,
        env: {
          ...process.env,
          DATABASE_URL: ctx.databaseUrl,
          BRAIN_WORKER_CACHE_DIR: join(dir, "cache"),
          BRAIN_LOG_LEVEL: "warn",
        },
        stdio: ["ignore", "pipe", "pipe"],
      });
      track(worker);
      await new Promise<void>((resolve, reject) => {
        let out = "";
        worker.stdout.on("data", (d) => {
          out += String(d);
          if (/^Brain worker ready/m.test(out)) resolve();
        });
        worker.once("exit", (code) => reject(new Error(`worker exited (${code}): ${out}`)));
      });
      const warm = ctx.quick ? 20 : 100;
      const burst = ctx.quick ? 10 : 30;
      const client = new Brain({ url: brain.server.url, token: brain.server.token });
      try {
        const c = tool({
          name: "c",
          description: "Finishes at once.",
          input: z.object({ steps: z.array(z.record(z.string(), z.unknown())) }),
          implementation: component(pathToFileURL(wasm)),
        });
        const call: ScriptStep = {
          toolCalls: [{ name: "c", input: { steps: [{ op: "finish", outcome: { status: "ok", value: 1 } }] } }],
        };
        const script = Array.from({ length: 1 + warm + burst }, () => [call, { text: "ok" }]).flat();
        const session = await client.sessions.create({
          model: { provider: "scripted", script },
          tools: [c({ env: brainEnv({ name: "bench" }) })],
        });
        const turn = async () => {
          const t0 = performance.now();
          const text = await session.send("go");
          if (text !== "ok") throw new Error(`unexpected answer ${JSON.stringify(text)}`);
          return performance.now() - t0;
        };
        const cold = await turn();
        const spaced: number[] = [];
        for (let i = 0; i < warm; i++) {
          await new Promise((r) => setTimeout(r, 150));
          spaced.push(await turn());
        }
        const backToBack: number[] = [];
        for (let i = 0; i < burst; i++) backToBack.push(await turn());
        const calls = await ctx.sql<{ ms: number }[]>`
          SELECT (extract(epoch FROM ended_at - started_at) * 1000)::float8 AS ms
          FROM brain.tool_calls WHERE session_id = ${session.id} ORDER BY seq`;
        const roundTrips = calls.map((r) => r.ms);
        return [
          latency("component_call.cold", [cold], {
            note: "first turn: transpile + compile + instantiate in a worker with an empty cache, then the call",
          }),
          latency("component_call.warm", spaced, { note: "turn with one component call, turns 150 ms apart" }),
          latency("component_call.back_to_back", backToBack, { note: "turns with no pause between them" }),
          latency("component_call.call_roundtrip", roundTrips.slice(1, 1 + warm), {
            note: "tool_call_started → tool_call_ended (journal), warm spaced calls: job, claim, run, finish",
          }),
        ];
      } finally {
        await client.close();
        worker.kill("SIGTERM");
        await new Promise((r) => worker.once("exit", r));
      }
    }),
};

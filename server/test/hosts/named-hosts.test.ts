// Named hosts served by application processes of their own (brain.hosts.serve): the test process
// is the web frontend creating sessions; replicas are real processes, killed and started late.

import { Brain, hostEnv, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { type NodeProcess, spawnNode } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { serverTicks, until } from "../../../testkit/wait.js";

let brain: InProcessBrain;
beforeAll(async () => {
  brain = await startBrain({ env: { BRAIN_HEARTBEAT_MS: "500" } });
});
afterAll(async () => {
  await brain?.close();
});

/** The frontend's declaration of the replicas' `lookup` (testkit/hosts/replica.mjs): same contract. */
function lookupTool(schema: "v1" | "v2" = "v1") {
  return tool({
    name: "lookup",
    description: "Looks up one record.",
    input:
      schema === "v2"
        ? z.object({ id: z.string(), hold: z.boolean().optional(), verbose: z.boolean() })
        : z.object({ id: z.string(), hold: z.boolean().optional() }),
    output: z.object({ value: z.string(), replica: z.string() }),
    options: z.object({ prefix: z.string() }),
    run: () => {
      throw new Error("the frontend never runs lookup: a replica does");
    },
  });
}

function replica(host: string, name: string, env: Record<string, string> = {}): NodeProcess {
  return spawnNode("testkit/hosts/replica.mjs", {
    env: { BRAIN_URL: brain.url, BRAIN_TOKEN: brain.token, NAMED_HOST: host, REPLICA: name, ...env },
  });
}

function running(p: NodeProcess): number[] {
  return [...p.output().matchAll(/^RUNNING (\d+)$/gm)].map((m) => Number(m[1]));
}

async function calls(sessionId: string) {
  return brain.db.sql<{ seq: number; state: string; connection_id: string | null; outcome: unknown }[]>`
    SELECT seq, state, connection_id, outcome FROM calls WHERE session_id = ${sessionId} ORDER BY seq`;
}

const hold = (n: number) => ({ name: "lookup", input: { id: String(n), hold: true } });

describe("named hosts", () => {
  it("spreads a named host's calls over its replicas; a killed replica's calls alone end unknown, the other keeps serving", async () => {
    const a = replica("app", "a");
    const b = replica("app", "b");
    const frontend = new Brain({ url: brain.url, token: brain.token });
    try {
      await Promise.all([a.waitForLine(/^SERVING \S+$/m), b.waitForLine(/^SERVING \S+$/m)]);
      const placed = lookupTool()({ env: hostEnv({ name: "app" }), prefix: "web:" });
      const session = await frontend.sessions.create({
        model: scripted({ toolCalls: [hold(1), hold(2), hold(3), hold(4)] }, { text: "held" }),
        tools: [placed],
      });
      expect(session.info.hostId).toBeNull(); // the frontend serves nothing itself
      await postMessage(brain, session.id, "go");
      const dispatched = await until("four calls running", async () => {
        const rows = await calls(session.id);
        return rows.length === 4 && rows.every((r) => r.state === "running") ? rows : undefined;
      });
      // Each call went to exactly one connection, two to each replica.
      const perConnection = new Map<string, number>();
      for (const r of dispatched) perConnection.set(r.connection_id!, (perConnection.get(r.connection_id!) ?? 0) + 1);
      expect([...perConnection.values()]).toEqual([2, 2]);
      await until("both replicas entered their calls", () => running(a).length === 2 && running(b).length === 2);
      expect(new Set([...running(a), ...running(b)]).size).toBe(4);

      await a.kill("SIGKILL");
      const lost = running(a);
      const after = await until("the killed replica's calls ended", async () => {
        const rows = await calls(session.id);
        return rows.filter((r) => lost.includes(r.seq)).every((r) => r.state === "ended") ? rows : undefined;
      });
      for (const r of after) {
        if (lost.includes(r.seq)) expect(r.outcome).toEqual({ status: "unknown", cause: "connection_lost" });
        else expect(r.state).toBe("running");
      }
      // A while later, the survivor's calls are still its own and still running.
      await serverTicks(brain.db.sql, brain.app.brain.serverId, 2);
      expect((await calls(session.id)).filter((r) => !lost.includes(r.seq)).map((r) => r.state)).toEqual([
        "running",
        "running",
      ]);

      // The other replica keeps serving new calls.
      const next = await frontend.sessions.create({
        model: scripted({ toolCalls: [{ name: "lookup", input: { id: "7" } }] }, { text: "served" }),
        tools: [placed],
      });
      await expect(next.send("go")).resolves.toBe("served");
      const [served] = await calls(next.id);
      // The replica's own options apply: the frontend's prefix stays with the frontend.
      expect(served!.outcome).toEqual({ status: "ok", value: { value: "b:7", replica: "b" } });

      await session.end();
      await b.waitForLine(/^ABORTED \d+$/m);
    } finally {
      await frontend.close();
      await Promise.all([a.kill(), b.stop()]);
    }
  });

  it("calls made while no replica is connected wait pending, and are served when one connects", async () => {
    const frontend = new Brain({ url: brain.url, token: brain.token });
    let late: NodeProcess | undefined;
    try {
      const session = await frontend.sessions.create({
        model: scripted({ toolCalls: [{ name: "lookup", input: { id: "1" } }] }, { text: "late but served" }),
        tools: [lookupTool()({ env: hostEnv({ name: "late" }), prefix: "web:" })],
      });
      const answer = session.send("go");
      await until("the call pending", async () => (await calls(session.id))[0]?.state === "pending");
      await serverTicks(brain.db.sql, brain.app.brain.serverId, 2);
      expect((await calls(session.id))[0]?.state).toBe("pending");

      late = replica("late", "late");
      await late.waitForLine(/^SERVING \S+$/m);
      await expect(answer).resolves.toBe("late but served");
      expect((await calls(session.id))[0]?.outcome).toEqual({
        status: "ok",
        value: { value: "late:1", replica: "late" },
      });
    } finally {
      await frontend.close();
      await late?.stop();
    }
  });

  it("refuses a replica whose schemas differ from the host's sessions, and a session whose schemas differ from its replicas (tool_mismatch)", async () => {
    const frontend = new Brain({ url: brain.url, token: brain.token });
    const server = new Brain({ url: brain.url, token: brain.token });
    try {
      const session = await frontend.sessions.create({
        model: scripted({ text: "nothing" }),
        tools: [lookupTool("v1")({ env: hostEnv({ name: "strict" }), prefix: "web:" })],
      });
      const v2 = replica("strict", "v2", { SCHEMA: "v2" });
      const [line] = await v2.waitForLine(/^REFUSED .*$/m);
      expect(line).toMatch(/^REFUSED tool_mismatch .*lookup: input/);
      expect((await v2.exited).code).toBe(2);

      // The same contract is accepted; then a session advertising another one is refused.
      const served = await server.hosts.serve({ name: "strict", tools: [lookupTool("v1")({ prefix: "in:" })] });
      expect(served.hostId).toMatch(/^[0-9a-f-]{36}$/);
      await expect(
        frontend.sessions.create({
          model: scripted({ text: "nothing" }),
          tools: [lookupTool("v2")({ env: hostEnv({ name: "strict" }), prefix: "web:" })],
        }),
      ).rejects.toMatchObject({ code: "tool_mismatch" });
      await session.end();
    } finally {
      await Promise.all([frontend.close(), server.close()]);
    }
  });

  it("named hosts belong to their token: another application's replica of the same name gets none of its calls", async () => {
    const operator = new Brain({ url: brain.url, token: brain.token });
    const created = await operator.tokens.create("billing");
    const app = new Brain({ url: brain.url, token: created.token });
    const appServer = new Brain({ url: brain.url, token: created.token });
    let operatorRuns = 0;
    const counting = tool({
      name: "lookup",
      description: "Counts the operator's runs.",
      input: z.object({ id: z.string(), hold: z.boolean().optional() }),
      output: z.object({ value: z.string(), replica: z.string() }),
      options: z.object({ prefix: z.string() }),
      run: ({ id }, ctx) => {
        operatorRuns++;
        return ctx.finish({ value: id, replica: "operator" });
      },
    });
    try {
      await operator.hosts.serve({ name: "shared", tools: [counting({ prefix: "" })] });
      const session = await app.sessions.create({
        model: scripted({ toolCalls: [{ name: "lookup", input: { id: "5" } }] }, { text: "own host" }),
        tools: [lookupTool()({ env: hostEnv({ name: "shared" }), prefix: "web:" })],
      });
      const answer = session.send("go");
      await until("the call pending", async () => (await calls(session.id))[0]?.state === "pending");
      await serverTicks(brain.db.sql, brain.app.brain.serverId, 2);
      expect((await calls(session.id))[0]?.state).toBe("pending");
      await appServer.hosts.serve({
        name: "shared",
        tools: [
          tool({
            name: "lookup",
            description: "The application's own.",
            input: z.object({ id: z.string(), hold: z.boolean().optional() }),
            output: z.object({ value: z.string(), replica: z.string() }),
            run: ({ id }, ctx) => ctx.finish({ value: id, replica: "billing" }),
          })(),
        ],
      });
      await expect(answer).resolves.toBe("own host");
      expect((await calls(session.id))[0]?.outcome).toEqual({
        status: "ok",
        value: { value: "5", replica: "billing" },
      });
      expect(operatorRuns).toBe(0);
    } finally {
      await Promise.all([operator.close(), app.close(), appServer.close()]);
    }
  });
});

describe("a session mixing its own host and a named host", () => {
  it("serves lookup() from the creating client and hostEnv tools from the named host's replica", async () => {
    const frontend = new Brain({ url: brain.url, token: brain.token });
    const server = new Brain({ url: brain.url, token: brain.token });
    const where = (who: string) =>
      tool({
        name: `where_${who}`,
        description: "Says which process ran it.",
        input: z.object({}),
        run: (_input, ctx) => ctx.finish({ ranIn: who }),
      });
    try {
      await server.hosts.serve({ name: "mixed", tools: [where("named")()] });
      const session = await frontend.sessions.create({
        model: scripted(
          {
            toolCalls: [
              { name: "where_own", input: {} },
              { name: "where_named", input: {} },
            ],
          },
          { text: "both ran" },
        ),
        tools: [where("own")(), where("named")({ env: hostEnv({ name: "mixed" }) })],
      });
      expect(session.info.hostId).toBe(frontend.credentials()?.hostId);
      await expect(session.send("go")).resolves.toBe("both ran");
      expect((await calls(session.id)).map((c) => c.outcome)).toEqual([
        { status: "ok", value: { ranIn: "own" } },
        { status: "ok", value: { ranIn: "named" } },
      ]);
    } finally {
      await Promise.all([frontend.close(), server.close()]);
    }
  });
});

describe("named hosts across servers", () => {
  it("replicas connected to two different servers split a turn's calls, each sent by the server holding its socket", async () => {
    const other = await startBrain({ db: brain.db });
    const entered = { a: 0, b: 0 };
    const holding = (who: "a" | "b") =>
      tool({
        name: "lookup",
        description: "Holds until its signal fires.",
        input: z.object({ id: z.string(), hold: z.boolean().optional() }),
        output: z.object({ value: z.string(), replica: z.string() }),
        run: async (_input, ctx) => {
          entered[who]++;
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        },
      })();
    const a = new Brain({ url: brain.url, token: brain.token });
    const b = new Brain({ url: other.url, token: other.token });
    const frontend = new Brain({ url: brain.url, token: brain.token });
    try {
      await a.hosts.serve({ name: "spread", tools: [holding("a")] });
      await b.hosts.serve({ name: "spread", tools: [holding("b")] });
      const session = await frontend.sessions.create({
        model: scripted({ toolCalls: [hold(1), hold(2), hold(3), hold(4)] }, { text: "held" }),
        tools: [lookupTool()({ env: hostEnv({ name: "spread" }), prefix: "web:" })],
      });
      await postMessage(brain, session.id, "go");
      await until("every call entered", () => entered.a + entered.b === 4);
      expect(entered).toEqual({ a: 2, b: 2 });
      const servers = await brain.db.sql<{ server_id: string; n: number }[]>`
        SELECT hc.server_id, count(*)::int AS n FROM calls c JOIN host_connections hc ON hc.id = c.connection_id
        WHERE c.session_id = ${session.id} GROUP BY hc.server_id ORDER BY hc.server_id`;
      expect(servers.map((s) => s.n)).toEqual([2, 2]);
      await session.end();
    } finally {
      await Promise.all([a.close(), b.close(), frontend.close()]);
      await other.close();
    }
  });
});

import { Brain, type ToolContext, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { postMessage } from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { spawnNode } from "../../../testkit/server-process.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const HEARTBEAT_MS = 200;
let brain: InProcessBrain;
beforeAll(async () => {
  brain = await startBrain({ env: { BRAIN_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
});
afterAll(async () => {
  await brain?.close();
});

async function calls(sessionId: string) {
  return brain.db.sql<{ seq: number; status: string; outcome: { status: string; cause?: string } | null }[]>`
    SELECT seq, status, outcome FROM tool_calls WHERE session_id = ${sessionId} ORDER BY seq`;
}

describe("connection loss", () => {
  it("a dropped socket ends its dispatched calls unknown, aborts the handlers, and the SDK reconnects as the same host without replaying", async () => {
    const client = new Brain({ url: brain.url, token: brain.token });
    try {
      const entered: ToolContext[] = [];
      const slow = tool({
        name: "slow",
        description: "Runs until its signal fires; the second call finishes at once.",
        input: z.object({ n: z.number() }),
        run: async ({ n }, ctx) => {
          entered.push(ctx as ToolContext);
          if (n === 2) return ctx.finish("second");
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        },
      });
      const session = await client.sessions.create({
        model: scripted(
          { toolCalls: [{ name: "slow", input: { n: 1 } }] },
          { text: "lost" },
          { toolCalls: [{ name: "slow", input: { n: 2 } }] },
          { text: "recovered" },
        ),
        tools: [slow()],
      });
      const hostId = client.credentials()!.hostId;
      await postMessage(brain, session.id, "first");
      await until("the expected state", async () => entered.length === 1);
      const [before] = brain.app.brain.hosts.ofHost(hostId);
      before!.terminate();

      await until("the expected state", async () => entered[0]!.signal.aborted);
      expect(entered[0]!.signal.reason).toMatchObject({ details: { status: "unknown" } });
      const [first] = await until("the expected state", async () => {
        const rows = await calls(session.id);
        return rows[0]?.status === "ended" ? rows : undefined;
      });
      expect(first!.outcome).toEqual({ status: "unknown", cause: "connection_lost" });

      // Reconnected as the same registered host, on a new connection.
      const after = await until("the expected state", async () => brain.app.brain.hosts.current(hostId));
      expect(after.id).not.toBe(before!.id);
      expect(await session.send("again")).toBe("recovered");
      expect(entered).toHaveLength(2); // the lost call was never sent again
      const rows = await calls(session.id);
      expect(rows.map((r) => r.outcome?.status)).toEqual(["unknown", "ok"]);
      const [conns] = await brain.db.sql`
        SELECT count(DISTINCT id)::int AS n, count(DISTINCT host_id)::int AS hosts FROM host_connections WHERE host_id = ${hostId}`;
      expect(conns).toEqual({ n: 2, hosts: 1 });
    } finally {
      await client.close();
    }
  });

  it("calls not yet dispatched wait for their host, and run once it is back", async () => {
    let runs = 0;
    const lookup = tool({
      name: "lookup",
      description: "Look up one record.",
      input: z.object({ id: z.string() }),
      run: async ({ id }, ctx) => {
        runs++;
        return ctx.finish({ value: id });
      },
    });
    const first = new Brain({ url: brain.url, token: brain.token });
    const session = await first.sessions.create({
      model: scripted({ toolCalls: [{ name: "lookup", input: { id: "9" } }] }, { text: "found" }),
      tools: [lookup()],
    });
    const credentials = first.credentials()!;
    await first.close(); // the host is gone
    await postMessage(brain, session.id, "find 9");
    const [pending] = await until("the expected state", async () => {
      const rows = await calls(session.id);
      return rows.length > 0 ? rows : undefined;
    });
    expect(pending!.status).toBe("pending");
    const second = new Brain({
      url: brain.url,
      token: brain.token,
      credentials: JSON.parse(JSON.stringify(credentials)),
    });
    try {
      await second.sessions.get(session.id, { tools: [lookup()] });
      const [done] = await until("the expected state", async () => {
        const rows = await calls(session.id);
        return rows[0]?.status === "ended" ? rows : undefined;
      });
      expect(done!.outcome).toEqual({ status: "ok", value: { value: "9" } });
      expect(runs).toBe(1);
    } finally {
      await second.close();
    }
  });

  it(`heartbeats detect a half-open host (a stopped process) within 3 × BRAIN_HEARTBEAT_MS`, async () => {
    const host = spawnNode("testkit/hosts/stall-host.mjs", { env: { BRAIN_URL: brain.url, BRAIN_TOKEN: brain.token } });
    try {
      const [, sessionId] = await host.waitForLine(/^SESSION (\S+)$/m);
      await postMessage(brain, sessionId!, "go");
      await host.waitForLine(/^RUNNING \d+$/m);
      const stoppedAt = Date.now();
      host.child.kill("SIGSTOP");
      const [ended] = await until("the expected state", async () => {
        const rows = await calls(sessionId!);
        return rows[0]?.status === "ended" ? rows : undefined;
      });
      expect(ended!.outcome).toEqual({ status: "unknown", cause: "connection_lost" });
      console.log(`half-open host detected ${Date.now() - stoppedAt} ms after SIGSTOP (heartbeat ${HEARTBEAT_MS} ms)`);
      host.child.kill("SIGCONT");
      // The host learns its socket is gone and aborts the handler (it never re-sends).
      await host.waitForLine(/^ABORTED \d+$/m);
    } finally {
      host.child.kill("SIGCONT");
      await host.kill();
    }
  });
});

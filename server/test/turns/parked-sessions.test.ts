// An idle session's Agentloop lets go of its state (BRAIN_SESSION_IDLE_MS) and the session stays
// this server's: the next message claims it again and rebuilds the state from the journal, so the
// model is asked exactly what it would have been asked without the pause. A message whose
// notification was lost reaches a parked session through the rescan that follows the LISTEN
// connection's return (or, polling, through the next poll).
import { Brain, tool } from "@aexhq/brain";
import { appendRecords } from "@aexhq/brain-db/ops";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrain } from "../../../testkit/brain.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { parseExposition, sampleValue } from "../../../testkit/metrics.js";
import { runAlone } from "../../../testkit/session-rows.js";
import { backgroundSession, scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const IDLE_MS = 300;
const server = startedBeforeAll(() => startBrain({ env: { BRAIN_SESSION_IDLE_MS: String(IDLE_MS) } }));
const openai = startedBeforeAll(() => startFakeOpenAI());

async function gauges(): Promise<{ actors: number; parked: number; reads: number; polling: boolean }> {
  const res = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${server.token}` } });
  const samples = parseExposition(await res.text());
  return {
    actors: sampleValue(samples, "brain_actors"),
    parked: sampleValue(samples, "brain_sessions_parked"),
    reads: sampleValue(samples, "brain_agentloop_catchups_total", { source: "read" }),
    polling: sampleValue(samples, "brain_wakeups_polling") === 1,
  };
}

const parked = (n: number, resident = 0) =>
  until(
    `${n} parked session(s) and ${resident} resident`,
    async () => {
      const g = await gauges();
      return g.parked === n && g.actors === resident ? g : undefined;
    },
    30_000,
  );

async function epochOf(sessionId: string): Promise<number> {
  const [row] = await server.db.sql<
    { owner_epoch: string }[]
  >`SELECT owner_epoch FROM sessions WHERE id = ${sessionId}`;
  return Number(row!.owner_epoch);
}

const lookup = tool({
  name: "lookup",
  description: "Finds what it is asked for.",
  input: z.object({ id: z.string() }),
  run: async ({ id }, ctx) => ctx.finish({ found: id }),
});

describe("parked sessions", () => {
  it("let their Agentloop's state go when idle, and the next turn is asked the whole conversation", async () => {
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const session = await client.sessions.create({
        model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url },
        tools: [lookup()],
      });
      openai.reply({ toolCalls: [{ name: "lookup", input: { id: "a" } }] }, { text: "first answer" });
      expect(await session.send("first")).toBe("first answer");
      const before = openai.requests.length;
      const lastOfFirst = openai.requests.at(-1)!.body.messages as unknown[];

      const idle = await parked(1);
      const epochBefore = await epochOf(session.id);
      // The mark a server taking the session over reads: parked where the journal ends.
      await until("the parked mark", async () => {
        const [row] = await server.db.sql<{ at_end: boolean }[]>`
          SELECT parked_seq = last_seq AS at_end FROM sessions WHERE id = ${session.id}`;
        return row!.at_end;
      });

      openai.reply({ text: "second answer" });
      expect(await session.send("second")).toBe("second answer");
      expect(openai.requests.length).toBe(before + 1);
      // What an actor that never let go would have sent: the first turn's last request, its
      // answer and the new message. The tool's call and result came back from the journal.
      expect(openai.requests.at(-1)!.body.messages).toEqual([
        ...lastOfFirst,
        { role: "assistant", content: "first answer" },
        { role: "user", content: "second" },
      ]);
      expect(JSON.stringify(lastOfFirst)).toContain('\\"found\\":\\"a\\"');

      const after = await gauges();
      // Resumed by reading the journal, as a takeover would; and parked again once idle.
      expect(after.reads).toBeGreaterThan(idle.reads);
      await parked(1);
      // Claimed again: a new fencing epoch, one claim for the one pause.
      expect(await epochOf(session.id)).toBe(epochBefore + 1);
    } finally {
      await client.close();
    }
  });

  it("stay this server's, and a message whose notification was lost reaches them on the rescan", async () => {
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const session = await client.sessions.create({ model: scripted("one", "two"), tools: [] });
      expect(await session.send("first")).toBe("one");
      // This one and the first test's.
      await parked(2);
      const [owner] = await server.db.sql<{ owner_id: string | null }[]>`
        SELECT owner_id FROM sessions WHERE id = ${session.id}`;
      expect(owner!.owner_id).toBe(server.app.brain.serverId);

      // Written outside the server's writer: no NOTIFY, so nothing wakes the parked session.
      const {
        records: [message],
      } = await runAlone(
        server.db.sql,
        appendRecords(session.id, [{ kind: "user_message", payload: { text: "unheard" } }]),
      );
      // The LISTEN connection drops and comes back: the server rescans. Behind a transaction
      // pooler without a direct URL (the polling leg) there is none: the next poll finds it.
      const [cut] = await server.db.sql<{ n: number }[]>`
        SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND application_name = 'brain-listener'`;
      expect(cut!.n).toBe((await gauges()).polling ? 0 : 1);

      const ended = await until("the unheard message's turn to end", async () => {
        const rows = await server.db.sql<{ payload: { status: string; text: string; message: number } }[]>`
          SELECT payload FROM records WHERE session_id = ${session.id} AND kind = 'activation_ended'
            AND (payload->>'message')::bigint = ${message!.seq}`;
        return rows[0];
      });
      expect(ended.payload).toMatchObject({ status: "completed", text: "two" });
    } finally {
      await client.close();
    }
  });

  it("keep a session resident while one of its calls runs on in the background", async () => {
    const client = new Brain({ url: server.url, token: server.token });
    try {
      const { session, ctx } = await backgroundSession(client, ["later"]);
      // A session idle since after it parks first; the one with the open call stays resident.
      const control = await client.sessions.create({ model: scripted("ok"), tools: [] });
      expect(await control.send("hi")).toBe("ok");
      await parked(3, 1);

      // The call's finish wakes the session, which tells the model and then parks too.
      await ctx().finish("done");
      await until("the later turn to end", async () => {
        const rows = await server.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM records WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
        return rows[0]!.n === 2;
      });
      await parked(4);
    } finally {
      await client.close();
    }
  });
});

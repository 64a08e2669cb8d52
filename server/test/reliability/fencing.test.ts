import { Brain } from "@aexhq/brain";
import { Touch } from "@aexhq/brain-db/commits";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { until } from "../../../testkit/wait.js";

let db: TestDatabase;
let x: InProcessBrain;
let y: InProcessBrain;
beforeAll(async () => {
  db = await createTestDatabase({ max: 20 });
  x = await startBrain({ db });
  y = await startBrain({ db });
});
afterAll(async () => {
  await x?.close();
  await y?.close();
  await db?.drop();
});

describe("one Agentloop per session, fenced", () => {
  it("after a takeover the previous owner's writes fail and it stops; the turn runs once, on the new owner", async () => {
    const client = new Brain({ url: x.url, token: x.token });
    try {
      const session = await client.sessions.create({
        model: { provider: "scripted", script: [{ text: "one" }, { text: "two" }] },
      });
      expect(await session.send("first")).toBe("one");
      const before = x.app.brain.actors.get(session.id)!;
      expect(before).toBeDefined();

      // X is presumed dead (as after a long pause), and Y takes the session over.
      // X's heartbeat revives it when it finds itself marked stopped, and a claim finds a live owner
      // in between (null): mark it again until Y's claim lands.
      const taken = await until("Y takes the session over", async () => {
        await db.sql`UPDATE servers SET stopped_at = now() WHERE id = ${x.app.brain.serverId}`;
        return y.app.brain.actors.resume(session.id);
      });
      // An actor, not a parked claim: X never marked the session parked.
      if (taken === null || taken === "parked") throw new Error(`Y's claim found ${taken}`);
      expect(taken.epoch).toBeGreaterThan(before.epoch);

      // X still thinks it owns the session: the message wakes it first, and its append is fenced.
      const res = await fetch(`${x.url}/v1/sessions/${session.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${x.token}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "second", wait: true }),
      });
      const answer = (await res.json()) as { sequence: number; activation: { text: string } };
      expect(answer.activation.text).toBe("two");
      expect(before.isStopped).toBe(true);
      expect(x.app.brain.actors.get(session.id)).toBeUndefined();

      const started = await db.sql`
        SELECT seq FROM journal WHERE session_id = ${session.id} AND kind = 'activation_started'
          AND (payload->>'message')::bigint = ${answer.sequence}`;
      expect(started).toHaveLength(1);
      const [models] = await db.sql`
        SELECT count(*)::int AS n FROM journal WHERE session_id = ${session.id} AND kind = 'model_call_started'`;
      expect(models!.n).toBe(2);
      const [owner] = await db.sql`SELECT owner_id FROM sessions WHERE id = ${session.id}`;
      expect(owner!.owner_id).toBe(y.app.brain.serverId);
    } finally {
      await client.close();
    }
  });

  it("a server shutting down takes no session again, not even its own, once its actors are stopped", async () => {
    const z = await startBrain({ db });
    const client = new Brain({ url: z.url, token: z.token });
    try {
      const session = await client.sessions.create({ model: { provider: "scripted", script: [{ text: "one" }] } });
      expect(await session.send("first")).toBe("one");
      const ownerOf = async () => {
        const [row] = await db.sql`SELECT owner_id, owner_epoch FROM sessions WHERE id = ${session.id}`;
        return row!;
      };
      const before = await ownerOf();
      expect(before.owner_id).toBe(z.app.brain.serverId);

      // stop() stops the actors first; the calls it then ends unknown are commits this server
      // hears like any other. Neither a commit nor a direct resume may claim the session back.
      z.app.brain.actors.stopAll();
      z.app.brain.actors.onCommit(session.id, Touch.observation);
      expect(await z.app.brain.actors.resume(session.id)).toBeNull();
      expect(z.app.brain.actors.size).toBe(0);
      expect(await ownerOf()).toEqual(before);
    } finally {
      await client.close();
      await z.close();
    }
  });
});

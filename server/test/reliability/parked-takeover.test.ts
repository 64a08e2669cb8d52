// A server that stops records which of its sessions had nothing to do (sessions.parked_seq), and a
// server taking them over owns those parked: no read, no Agentloop, until a message comes. A
// session whose journal moved past that mark (here: a message written without a notification,
// which the stopping server never heard) is resumed as before, and its message answered.
import { Brain } from "@aexhq/brain";
import { appendRecords } from "@aexhq/brain-db/ops";
import { afterAll, describe, expect, it } from "vitest";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { createTestDatabase, type TestDatabase } from "../../../testkit/database.js";
import { parseExposition, sampleValue } from "../../../testkit/metrics.js";
import { runAlone } from "../../../testkit/session-rows.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

let db: TestDatabase | undefined;
const servers: InProcessBrain[] = [];
/** Closes every server and drops the database: each test starts on a database of its own. */
async function reset(): Promise<void> {
  for (const s of servers.splice(0)) await s.close().catch(() => {});
  await db?.drop();
  db = undefined;
}
afterAll(reset);

/**
 * A server on the shared database. By default it never parks on its own (parking comes from the
 * marks); `idleMs` turns parking on, with an idle time longer than the test waits.
 */
async function server(idleMs = 0): Promise<InProcessBrain> {
  db ??= await createTestDatabase({ max: 20 });
  const s = await startBrain({ db, env: { BRAIN_SESSION_IDLE_MS: String(idleMs) } });
  servers.push(s);
  return s;
}

async function gauges(s: InProcessBrain): Promise<{ actors: number; parked: number }> {
  const res = await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${s.token}` } });
  const samples = parseExposition(await res.text());
  return { actors: sampleValue(samples, "brain_actors"), parked: sampleValue(samples, "brain_sessions_parked") };
}

async function marks(sessionId: string): Promise<{ last: number; parked: number | null }> {
  const [row] = await db!.sql<{ last_seq: string; parked_seq: string | null }[]>`
    SELECT last_seq, parked_seq FROM sessions WHERE id = ${sessionId}`;
  return { last: Number(row!.last_seq), parked: row!.parked_seq === null ? null : Number(row!.parked_seq) };
}

describe("taking over parked sessions", () => {
  it("owns the idle ones parked, without reading them, and resumes the one whose journal moved on", async () => {
    const a = await server();
    const clientA = new Brain({ url: a.url, token: a.token });
    const idle = await clientA.sessions.create({ model: scripted("one", "two"), tools: [] });
    expect(await idle.send("first")).toBe("one");
    const behind = await clientA.sessions.create({ model: scripted("uno", "dos"), tools: [] });
    expect(await behind.send("primero")).toBe("uno");
    // Written outside any writer: no NOTIFY, so the server running the session never hears it.
    await runAlone(db!.sql, appendRecords(behind.id, [{ kind: "user_message", payload: { text: "unheard" } }]));
    await clientA.close();

    const b = await server();
    await a.close();
    // On its way out, `a` marked what its idle actors had folded.
    const mark = await marks(idle.id);
    expect(mark.parked).toBe(mark.last);
    const moved = await marks(behind.id);
    expect(moved.parked).toBe(moved.last - 1);

    // `b`'s sweep takes both over: the idle one parked, the other with an Agentloop that answers.
    await until(
      "the unheard message's turn to end on the new server",
      async () => {
        const [row] = await db!.sql<{ text: string }[]>`
          SELECT payload->>'text' AS text FROM records WHERE session_id = ${behind.id} AND kind = 'activation_ended'
          ORDER BY seq DESC LIMIT 1`;
        return row?.text === "dos";
      },
      30_000,
    );
    await until("one session parked and one resident on the new server", async () => {
      const g = await gauges(b);
      return g.parked === 1 && g.actors === 1;
    });
    const [owner] = await db!.sql<{ owner_id: string }[]>`SELECT owner_id FROM sessions WHERE id = ${idle.id}`;
    expect(owner!.owner_id).toBe(b.app.brain.serverId);

    // The parked one wakes on its next message, with its state rebuilt from the journal.
    const clientB = new Brain({ url: b.url, token: b.token });
    try {
      const again = await clientB.sessions.get(idle.id);
      expect(await again.send("second")).toBe("two");
      expect(await gauges(b)).toEqual({ actors: 2, parked: 0 });
    } finally {
      await clientB.close();
    }
  });

  it("parks at once a session it resumed from a dead server's journal with nothing to do", async () => {
    await reset();
    const a = await server();
    const clientA = new Brain({ url: a.url, token: a.token });
    const session = await clientA.sessions.create({ model: scripted("one", "two"), tools: [] });
    expect(await session.send("first")).toBe("one");
    await clientA.close();
    await a.close();
    // What a SIGKILL leaves: the session owned by a dead server, and no mark (a clean stop wrote one).
    await db!.sql`UPDATE sessions SET parked_seq = NULL WHERE id = ${session.id}`;
    // Parking on, with an idle time far past this test's waits: only the sweep's rule parks here.
    const c = await server(600_000);

    await until("the session resumed and parked at once", async () => {
      const g = await gauges(c);
      return g.parked === 1 && g.actors === 0;
    });
    const [owner] = await db!.sql<{ owner_id: string }[]>`SELECT owner_id FROM sessions WHERE id = ${session.id}`;
    expect(owner!.owner_id).toBe(c.app.brain.serverId);
    // The mark follows the gauge: it is written once the tick has parked the session in memory.
    await until("the parked mark", async () => {
      const mark = await marks(session.id);
      return mark.parked === mark.last;
    });

    const clientC = new Brain({ url: c.url, token: c.token });
    try {
      expect(await (await clientC.sessions.get(session.id)).send("second")).toBe("two");
      // Woken by a message: it stays resident for the idle time, like any session in use.
      expect(await gauges(c)).toEqual({ actors: 1, parked: 0 });
    } finally {
      await clientC.close();
    }
  });
});

import { randomUUID } from "node:crypto";
import type { ToolPlacement } from "@aexhq/brain-contracts";
import { channelFor } from "@aexhq/brain-db/commits";
import { distributedOnCitus } from "@aexhq/brain-db/migrate";
import {
  appendRecords,
  claimNamedCalls,
  createSession,
  insertReplica,
  type Judgement,
  NO_JUDGEMENT,
  openReplicaConnection,
  registerServer,
} from "@aexhq/brain-db/ops";
import { JournalWriter } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";

// A named host's calls are shared among the replica connections of live servers, and a new
// session's tools are checked against every live replica. After a database outage every
// server's beat is stale at once: the server back first counts as live those its judgement
// presumes live (server/src/liveness.ts), rather than taking every pending call for its own
// replicas or skipping the others' replicas in the check.

let db: TestDatabase;
let writer: JournalWriter;
/** On a Citus cluster (the Citus leg runs this file too), the claims as servers there make them. */
let citus = false;

beforeAll(async () => {
  db = await createTestDatabase({ max: 4 });
  citus = await distributedOnCitus(db.sql, "brain");
  writer = new JournalWriter(db.sql, { channel: channelFor("brain"), origin: randomUUID(), citus });
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

/** The tool as placed in (and served by the replicas of) the named host `host`. */
const lookup = (host: string): ToolPlacement => ({
  name: "lookup",
  description: "Looks a word up.",
  inputSchema: { type: "object", properties: { q: { type: "string" } } },
  outputSchema: null,
  env: { type: "host", name: host },
});

/**
 * A named host with one replica connection on a live server (`here`) and one on a server silent
 * for 10 s (`there`, as after an outage), serving `thereServes`; a judgement that presumes
 * `there` live.
 */
async function twoReplicas(name: string, thereServes = lookup(name)) {
  const [here, there] = [randomUUID(), randomUUID()];
  for (const id of [here, there]) await registerServer(db.sql, id);
  await db.sql`UPDATE servers SET heartbeat_at = now() - interval '10 seconds' WHERE id = ${there}`;
  const connections: string[] = [];
  let hostId = "";
  for (const serverId of [here, there]) {
    const replicaId = randomUUID();
    const tools = [serverId === here ? lookup(name) : thereServes];
    hostId = await insertReplica(db.sql, { id: replicaId, name, owner: null, tokenHash: Buffer.alloc(32), tools });
    const id = randomUUID();
    await openReplicaConnection(db.sql, { id, replicaId, hostId, serverId });
    connections.push(id);
  }
  const [row] = await db.sql<{ t: Date }[]>`SELECT now() - interval '13 seconds' AS t`;
  const presuming: Judgement = { judgedAt: null, presumedLiveSince: row!.t };
  return { hostId, here: connections[0]!, presuming, owner: here };
}

/** A session placing `placed` in the named host `name`. */
function session(name: string, owner: string, placed: ToolPlacement, judge: Judgement) {
  const id = randomUUID();
  return {
    id,
    op: createSession({
      id,
      hostId: null,
      model: { provider: "scripted", script: [] },
      tools: [placed],
      metadata: {},
      ownerId: owner,
      created: { model: { provider: "scripted" }, tools: [{ name: placed.name, env: placed.env }], hostId: null },
      namedHosts: { byName: new Map([[name, [placed]]]), judge },
    }),
  };
}

describe("named hosts after an outage", () => {
  it("a replica takes its share with the presumed-live servers' replicas counted, the rest once they are not", async () => {
    const { hostId, here, presuming, owner } = await twoReplicas("shares");
    const s = session("shares", owner, lookup("shares"), presuming);
    await writer.submit(s.op);
    for (let i = 0; i < 4; i++) {
      await writer.submit(
        appendRecords(s.id, [
          {
            kind: "tool_call_started",
            payload: { tool: "lookup", callId: randomUUID(), input: { q: `w${i}` }, activation: null, deadline: null },
            call: {
              tool: "lookup",
              activationSeq: null,
              hostId,
              connectionId: null,
              state: "pending",
              deadlineAt: null,
            },
          },
        ]),
      );
    }
    // Two replicas count: half of the four calls.
    expect(await writer.submit(claimNamedCalls(hostId, here, { judge: presuming, citus }))).toHaveLength(2);
    // Judged without the presumption, the silent server's replica does not count: the rest.
    expect(await writer.submit(claimNamedCalls(hostId, here, { judge: NO_JUDGEMENT, citus }))).toHaveLength(2);
  });

  it("a new session's tools are checked against a presumed-live server's replica too", async () => {
    const numbers = { ...lookup("checks"), inputSchema: { type: "object", properties: { q: { type: "number" } } } };
    const { presuming, owner } = await twoReplicas("checks", numbers);
    // The silent server's replica reads `q` as a number, the live one's as a string.
    await expect(writer.submit(session("checks", owner, lookup("checks"), presuming).op)).rejects.toMatchObject({
      code: "tool_mismatch",
    });
    // Judged without the presumption, only the live server's replica is checked.
    await expect(writer.submit(session("checks", owner, lookup("checks"), NO_JUDGEMENT).op)).resolves.toBeDefined();
  });
});

import { randomUUID } from "node:crypto";
import { type CommitKeys, channelFor } from "@aexhq/brain-db/commits";
import { appendUnchecked, readRecords, rel, transitionCall } from "@aexhq/brain-db/ops";
import { JournalWriter, type WrittenRecord } from "@aexhq/brain-db/writer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../../testkit/database.js";
import { bareSession } from "../../testkit/session-rows.js";

// A committed batch hands this process the records it wrote (WriteOp.written), so that the
// session's Agentloop folds them without reading them back. That is only sound if they are exactly
// what a read returns: same sequences, kinds and payloads, keys in the order jsonb gives them.

let db: TestDatabase;
let writer: JournalWriter;
const heard: { keys: CommitKeys; written: ReadonlyMap<string, WrittenRecord[]> }[] = [];
const serverId = randomUUID();
const hostId = randomUUID();
const connectionId = randomUUID();

beforeAll(async () => {
  db = await createTestDatabase();
  await db.sql`INSERT INTO servers (id) VALUES (${serverId})`;
  await db.sql`INSERT INTO hosts (id, token_hash) VALUES (${hostId}, '\\x00')`;
  writer = new JournalWriter(db.sql, {
    channel: channelFor("brain"),
    origin: randomUUID(),
    onCommit: (keys, written) => heard.push({ keys, written }),
  });
});
afterAll(async () => {
  await writer?.close();
  await db?.drop();
});

async function newSession(): Promise<string> {
  const id = randomUUID();
  await writer.submit(bareSession(id, hostId, serverId));
  return id;
}

/** Payloads as text, so that key order counts. */
const asText = (records: { seq: number; kind: string; payload: unknown }[]) =>
  records.map((r) => `${r.seq} ${r.kind} ${JSON.stringify(r.payload)}`);

/** Every record the writer handed on for `sessionId`, in order. */
const handedOn = (sessionId: string) => heard.flatMap((h) => h.written.get(sessionId) ?? []);

describe("records handed on at commit", () => {
  it("are what a read of the journal returns, key order and all", async () => {
    const id = await newSession();
    heard.length = 0;
    const awkward = {
      zebra: 1,
      a: { longer_key: [3, { y: null, x: "é" }], b: true },
      "10": "integer-like",
      é: "two bytes",
      e: 1e21,
      small: 5e-324,
      skipped: undefined,
    };
    const { records } = await writer.submit(
      appendUnchecked(id, [
        { kind: "model_call_started", payload: { activation: 1 } },
        {
          kind: "tool_call_started",
          payload: { tool: "t", input: awkward, activation: rel(-1) },
          call: { tool: "t", activationSeq: 1, hostId, connectionId, state: "running", deadlineAt: null },
        },
      ]),
    );
    const call = records[1]!.seq;
    const ref = { sessionId: id, seq: call, hostId };
    await writer.submit(transitionCall(ref, { type: "emit", kind: "progress", data: { z: 1, a: [{ c: 2, b: 1 }] } }));
    await writer.submit(
      transitionCall(ref, { type: "result", outcome: { status: "ok", value: { q: 1, p: 2 } } as never, content: "r" }),
    );
    // No outcome of its own: the terminal record carries the earlier result's, filled in by SQL.
    await writer.submit(transitionCall(ref, { type: "finish" }));
    // A finish with its own outcome (most calls end so): the terminal record is handed on as
    // Postgres returned the outcome, not copied, and must still read back the same.
    const second = await writer.submit(
      appendUnchecked(id, [
        {
          kind: "tool_call_started",
          payload: { tool: "t", input: {}, activation: 1 },
          call: { tool: "t", activationSeq: 1, hostId, connectionId, state: "running", deadlineAt: null },
        },
      ]),
    );
    const outcome = { value: awkward, status: "ok" } as never;
    await writer.submit(transitionCall({ ...ref, seq: second.records[0]!.seq }, { type: "finish", outcome }));

    const read = await readRecords(db.sql, id, 1);
    expect(read.map((r) => r.kind)).toEqual([
      "model_call_started",
      "tool_call_started",
      "progress",
      "tool_result",
      "tool_call_ended",
      "tool_call_started",
      "tool_result",
      "tool_call_ended",
    ]);
    const mine = handedOn(id);
    expect(asText(mine)).toEqual(asText(read));
    // Key order is jsonb's, not the writer's: the comparison above would catch insertion order.
    expect(JSON.stringify(mine[1]!.payload)).not.toBe(JSON.stringify({ tool: "t", input: awkward, activation: 2 }));
    for (const [i, r] of mine.entries()) {
      expect(Math.abs(r.createdAt.getTime() - read[i]!.created_at.getTime())).toBeLessThan(50);
    }
  });

  it("leave out a session that a write without a description touched in the same batch", async () => {
    const id = await newSession();
    heard.length = 0;
    const described = appendUnchecked(id, [{ kind: "note", payload: { n: 1 } }]);
    // The same append without its description: the batch's records for the session are unknown.
    const undescribed = { ...appendUnchecked(id, [{ kind: "note", payload: { n: 2 } }]), written: undefined };
    const blocker = writer.submit({
      keys: () => ({ sessions: new Map(), hosts: new Set(), releases: new Map() }),
      run: (tx) => tx`SELECT 1`.execute(),
    });
    const both = Promise.all([writer.submit(described), writer.submit(undescribed)]);
    await blocker;
    await both;
    const batch = heard.find((h) => h.keys.sessions.has(id))!;
    expect(batch.written.has(id)).toBe(false);
  });
});

describe("a write's committed hook", () => {
  // The Agentloop sends a dispatched call's invoke frame from it (hosts/dispatch.ts): it must run
  // as soon as the commit is known, ahead of the announcement and of the write's own caller.
  it("runs with the result before the commit is announced and before the write resolves, in either batch shape", async () => {
    const id = await newSession();
    for (const shape of ["one round trip", "alone"] as const) {
      const order: string[] = [];
      heard.length = 0;
      const op = appendUnchecked(id, [{ kind: "progress", payload: { shape } }]);
      // Without `notify` a write cannot go out in one round trip: it runs in a batch of its own.
      const submitted =
        shape === "alone" ? { keys: op.keys, run: op.run, written: op.written } : { ...op, merge: undefined };
      const committedWith: number[] = [];
      const announcedBefore = heard.length;
      const result = writer.submit({
        ...submitted,
        committed: (r) => {
          order.push(heard.length > announcedBefore ? "hook after announce" : "hook");
          committedWith.push(...r.records.map((x) => x.seq));
        },
      });
      void result.then(() => order.push("resolved"));
      const written = await result;
      order.push(heard.length > announcedBefore ? "announced" : "not announced");
      expect(order).toEqual(["hook", "resolved", "announced"]);
      expect(committedWith).toEqual(written.records.map((r) => r.seq));
    }
  });

  it("is dropped when it throws: the write has committed, and resolves", async () => {
    const id = await newSession();
    const written = await writer.submit({
      ...appendUnchecked(id, [{ kind: "progress", payload: {} }]),
      committed: () => {
        throw new Error("a hook's own failure");
      },
    });
    expect(written.records).toHaveLength(1);
    expect((await readRecords(db.sql, id, 0)).at(-1)?.kind).toBe("progress");
  });
});

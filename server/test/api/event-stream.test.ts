import { randomUUID } from "node:crypto";
import type { JournalEvent } from "@aexhq/brain-contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  closeStreams,
  createSession,
  type EventStream,
  expectContiguous,
  expectError,
  openEvents,
  postMessage,
  readEvents,
  request,
  type Target,
} from "../../../testkit/api.js";
import { type InProcessBrain, startBrain } from "../../../testkit/brain.js";
import { within } from "../../../testkit/wait.js";

let brain: InProcessBrain;
/** A second Brain server on the same database: its commits reach `brain` only through NOTIFY. */
let peer: InProcessBrain;

beforeAll(async () => {
  brain = await startBrain();
  peer = await startBrain({ db: brain.db });
});
afterAll(async () => {
  closeStreams();
  await peer?.close();
  await brain?.close();
});

async function follow(target: Target, sessionId: string, after = 0): Promise<EventStream> {
  const stream = await openEvents(target, sessionId, `after=${after}&follow=true`);
  expect(stream.status).toBe(200);
  return stream;
}

async function journal(sessionId: string): Promise<JournalEvent[]> {
  const rows = await brain.db.sql<{ seq: number; kind: string; payload: JournalEvent["payload"]; created_at: Date }[]>`
    SELECT seq::int AS seq, kind, payload, created_at FROM records WHERE session_id = ${sessionId} ORDER BY seq`;
  return rows.map((r) => ({
    sequence: r.seq,
    kind: r.kind,
    payload: r.payload,
    createdAt: r.created_at.toISOString(),
  }));
}

async function lastSeq(sessionId: string): Promise<number> {
  const [row] = await brain.db.sql<{ last: number }[]>`
    SELECT coalesce(max(seq), 0)::int AS last FROM records WHERE session_id = ${sessionId}`;
  return row!.last;
}

/** Posts `count` messages, `batch` at a time, alternating between the two servers. */
async function burst(sessionId: string, count: number, batch = 50): Promise<number[]> {
  const sequences: number[] = [];
  for (let i = 0; i < count; i += batch) {
    const sent = await Promise.all(
      Array.from({ length: Math.min(batch, count - i) }, (_, j) =>
        postMessage((i + j) % 2 === 0 ? brain : peer, sessionId, `m${i + j}`),
      ),
    );
    sequences.push(...sent.map((s) => s.sequence));
  }
  return sequences;
}

async function end(target: Target, sessionId: string): Promise<void> {
  expect((await request(target, "POST", `/v1/sessions/${sessionId}/end`)).status).toBe(200);
}

describe("event stream: backlog", () => {
  it("is NDJSON of JournalEvents equal to the journal, and ends after the backlog without follow", async () => {
    const session = await createSession(brain, { model: { provider: "scripted", script: [{ text: "ok" }] } });
    await postMessage(brain, session.id, "hello", { wait: true });
    for (const query of ["after=0", "", "after=0&follow=false", "follow=0"]) {
      const stream = await readEvents(brain, session.id, query);
      expect(stream.status).toBe(200);
      expect(stream.contentType).toMatch(/^application\/x-ndjson/);
      expect(await stream.done).toBe(true);
      expect(stream.events).toEqual(await journal(session.id));
    }
    const kinds = (await journal(session.id)).map((e) => e.kind);
    expect(kinds.slice(0, 2)).toEqual(["session_created", "user_message"]);
    expect(kinds.at(-1)).toBe("activation_ended");
  });

  it("after=N returns exactly the records with seq > N, in order", async () => {
    const session = await createSession(brain, {
      model: { provider: "scripted", script: [{ text: "a" }, { text: "b" }] },
    });
    await postMessage(brain, session.id, "one", { wait: true });
    await postMessage(brain, session.id, "two", { wait: true });
    const all = await journal(session.id);
    expect(all.length).toBeGreaterThan(8);
    for (let n = 0; n <= all.length + 2; n++) {
      const stream = await readEvents(brain, session.id, `after=${n}`);
      expect(stream.events, `after=${n}`).toEqual(all.filter((e) => e.sequence > n));
    }
  });

  it("pages a backlog of more than 500 records", async () => {
    const session = await createSession(brain);
    await burst(session.id, 1050);
    await end(brain, session.id);
    const all = await journal(session.id);
    expect(all.length).toBeGreaterThan(1050);
    const whole = await readEvents(brain, session.id, "after=0");
    expectContiguous(whole.events, 1);
    expect(whole.events).toEqual(all);
    for (const n of [1, 499, 500, 501, 999, 1000, 1001, all.length - 1, all.length]) {
      const stream = await readEvents(peer, session.id, `after=${n}`);
      expect(stream.events.length, `after=${n}`).toBe(all.length - n);
      if (stream.events.length > 0) expectContiguous(stream.events, n + 1);
    }
    // A follow stream reads the same pages and ends with the session's last record.
    const live = await readEvents(brain, session.id, "after=0&follow=true");
    expect(live.events).toEqual(all);
    expect(live.events.at(-1)?.kind).toBe("session_ended");
  });

  it("pages a journal of large records by bytes, without gaps or duplicates", async () => {
    const session = await createSession(brain);
    // 100 KB each: a page (256 KiB of payload) holds two or three of them.
    const text = "y".repeat(100_000);
    for (let i = 0; i < 30; i++) await postMessage(i % 2 === 0 ? brain : peer, session.id, `${i}${text}`);
    await end(brain, session.id);
    const all = await journal(session.id);
    for (const query of ["after=0", "after=0&follow=true", "after=7", "after=8&follow=true"]) {
      const after = Number(/after=(\d+)/.exec(query)![1]);
      const stream = await readEvents(query.includes("follow") ? peer : brain, session.id, query, 30_000);
      expect(stream.events, query).toEqual(all.filter((e) => e.sequence > after));
    }
  });

  it("a follow stream with nothing to send yet answers its headers at once", async () => {
    const session = await createSession(brain);
    // Nothing after seq 1 exists yet: only the headers can arrive, and they should.
    const stream = await openEvents(brain, session.id, "after=1&follow=true");
    expect(stream.status).toBe(200);
    expect(stream.contentType).toMatch(/^application\/x-ndjson/);
    await postMessage(brain, session.id, "now");
    await stream.reached(2);
    expect(stream.events[0]).toMatchObject({ sequence: 2, kind: "user_message", payload: { text: "now" } });
    await stream.close();
  });

  it("answers 404 for an unknown session, as JSON", async () => {
    const answer = await request(brain, "GET", `/v1/sessions/${randomUUID()}/events?follow=true`);
    expectError(answer, "not_found");
  });
});

describe("event stream: follow", () => {
  it("delivers every record written while streaming, from both servers, exactly once", async () => {
    const session = await createSession(brain);
    const here = await follow(brain, session.id);
    const there = await follow(peer, session.id);
    await Promise.all([here.reached(1), there.reached(1)]);
    // Half of the messages commit on the peer: `here` learns of them through LISTEN/NOTIFY only.
    const sequences = await burst(session.id, 80, 40);
    expect(new Set(sequences).size).toBe(80);
    const last = await lastSeq(session.id);
    await Promise.all([here.reached(last), there.reached(last)]);
    await end(peer, session.id);
    expect(await within(here.done, "the stream on the first server to end")).toBe(true);
    expect(await within(there.done, "the stream on the peer to end")).toBe(true);
    const all = await journal(session.id);
    expect(all.at(-1)?.kind).toBe("session_ended");
    for (const stream of [here, there]) {
      expectContiguous(stream.events, 1);
      expect(stream.events).toEqual(all);
    }
  });

  it("catches up after every burst of commits, without waiting for a later one", async () => {
    const session = await createSession(brain);
    // Several readers on each server: each is one more chance to lose a wake-up that lands while
    // it is busy finishing a read.
    const readers = await Promise.all([brain, brain, brain, peer, peer, peer].map((t) => follow(t, session.id)));
    for (let round = 0; round < 50; round++) {
      await postMessage(round % 2 === 0 ? brain : peer, session.id, `r${round}`, { wait: true });
      const last = await lastSeq(session.id);
      await Promise.all(readers.map((r) => r.reached(last, 5_000)));
    }
    await request(brain, "DELETE", `/v1/sessions/${session.id}`);
    await within(Promise.all(readers.map((r) => r.done)), "the streams to end");
    // Polling (the pooler leg without a direct URL), each round waits up to a poll or two.
  }, 180_000);

  it("resumes from the last seen sequence after a disconnect, without gaps or duplicates", async () => {
    const session = await createSession(brain);
    const seen: JournalEvent[] = [];
    const writing = burst(session.id, 48, 4);
    // Disconnect mid-stream, several times, each after a few new records.
    for (let cut = 0; cut < 6; cut++) {
      const after = seen.at(-1)?.sequence ?? 0;
      const stream = await follow(cut % 2 === 0 ? brain : peer, session.id, after);
      await stream.reached(after + 3);
      await stream.close();
      expect(await stream.done).toBe(false);
      seen.push(...stream.events);
      expectContiguous(seen, 1);
    }
    await writing;
    await end(brain, session.id);
    const rest = await readEvents(peer, session.id, `after=${seen.at(-1)!.sequence}&follow=true`);
    seen.push(...rest.events);
    expectContiguous(seen, 1);
    expect(seen).toEqual(await journal(session.id));
  });

  it("ends after delivering session_ended when the session ends", async () => {
    const session = await createSession(brain);
    const here = await follow(brain, session.id);
    const there = await follow(peer, session.id);
    await Promise.all([here.reached(1), there.reached(1)]);
    await end(brain, session.id);
    for (const stream of [here, there]) {
      expect(await within(stream.done, "the stream to end")).toBe(true);
      expect(stream.events.map((e) => [e.sequence, e.kind])).toEqual([
        [1, "session_created"],
        [2, "session_ended"],
      ]);
    }
    // Following an ended session returns its journal and ends.
    const late = await readEvents(brain, session.id, "after=0&follow=true");
    expect(late.events.map((e) => e.kind)).toEqual(["session_created", "session_ended"]);
  });

  it("a follow stream resumed after session_ended ends at once", async () => {
    const session = await createSession(brain);
    await end(brain, session.id);
    // A client that saw session_ended (seq 2), lost its connection and resumes from there.
    const resumed = await readEvents(brain, session.id, "after=2&follow=true", 5_000);
    expect(resumed.events).toEqual([]);
    const peerResumed = await readEvents(peer, session.id, "after=2&follow=1", 5_000);
    expect(peerResumed.events).toEqual([]);
  });

  it("ends when the session is deleted, on both servers", async () => {
    const session = await createSession(brain);
    const here = await follow(brain, session.id);
    const there = await follow(peer, session.id);
    await Promise.all([here.reached(1), there.reached(1)]);
    expect((await request(peer, "DELETE", `/v1/sessions/${session.id}`)).status).toBe(204);
    for (const stream of [here, there]) {
      expect(await within(stream.done, "the stream to end")).toBe(true);
      expect(stream.events.map((e) => e.sequence)).toEqual([1]);
    }
  });
});

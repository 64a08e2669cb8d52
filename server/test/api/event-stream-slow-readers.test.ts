// Readers of the event stream that stop reading: a server process (spawned, so its memory is its
// own) streams a ~25 MB journal to ten raw TCP clients that never read. What it holds for them
// must stay bounded (pages by bytes, the next page only once the socket took the last), it must
// drop them after BRAIN_STREAM_STALL_MS, and a normal reader meanwhile gets every record once.
import { execFile } from "node:child_process";
import { connect, type Socket } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeStreams, createSession, expectContiguous, readEvents, request } from "../../../testkit/api.js";
import { type SpawnedBrain, spawnBrain } from "../../../testkit/brain.js";
import { until, within } from "../../../testkit/wait.js";

const STALL_MS = 2_000;
const READERS = 10;
const MESSAGES = 100;
const MESSAGE_CHARS = 250_000;
/** What one stalled reader may leave buffered: the socket's high-water mark plus one record. */
const BUFFER_BOUND = 1024 * 1024;
/** Ten readers of the whole journal held it ten times over (~250 MB); bounded, they hold pages. */
const GROWTH_BOUND = 140 * 1024 * 1024;

let brain: SpawnedBrain;

beforeAll(async () => {
  brain = await spawnBrain({ env: { BRAIN_STREAM_STALL_MS: String(STALL_MS) } });
});
afterAll(async () => {
  closeStreams();
  await brain?.close();
});

/** The server process's resident memory, in bytes. */
async function rss(): Promise<number> {
  const { stdout } = await promisify(execFile)("ps", ["-o", "rss=", "-p", String(brain.server.pid)]);
  return Number(stdout.trim()) * 1024;
}

/** An HTTP client that sends its request and then never reads: its socket stays paused. */
function stalledReader(sessionId: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(brain.url);
    const socket = connect({ host: hostname, port: Number(port) }, () => {
      socket.write(
        `GET /v1/sessions/${sessionId}/events?after=0 HTTP/1.1\r\nhost: ${hostname}\r\n` +
          `authorization: Bearer ${brain.token}\r\n\r\n`,
      );
      socket.pause();
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

/** Reads what is left and resolves with the byte count once the server has closed the socket. */
function drainToClose(socket: Socket): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    socket.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    socket.on("error", () => {});
    socket.once("close", () => resolve(bytes));
    socket.resume();
  });
}

interface StallLine {
  msg: string;
  sessionId: string;
  buffered: number;
}

function stallLines(): StallLine[] {
  return brain.server
    .output()
    .split("\n")
    .filter((line) => line.includes("event stream reader stalled"))
    .map((line) => JSON.parse(line) as StallLine);
}

describe("event stream: slow readers", () => {
  it("holds bounded memory for readers that stop reading, drops them after the stall timeout, and serves the others", async () => {
    const session = await createSession(brain);
    const text = "x".repeat(MESSAGE_CHARS);
    for (let i = 0; i < MESSAGES; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, async () => {
          const answer = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, { body: { text } });
          expect(answer.status).toBe(201);
        }),
      );
    }
    await until(
      "every turn to end",
      async () => {
        const [row] = await brain.db.sql<{ n: number }[]>`
          SELECT count(*)::int AS n FROM records WHERE session_id = ${session.id} AND kind = 'activation_ended'`;
        return row!.n === MESSAGES;
      },
      120_000,
    );
    // Ended, so its Agentloop (and the conversation it holds) is gone before memory is measured.
    expect((await request(brain, "POST", `/v1/sessions/${session.id}/end`)).status).toBe(200);
    const [size] = await brain.db.sql<{ records: number; bytes: number }[]>`
      SELECT count(*)::int AS records, sum(octet_length(payload::text))::int8 AS bytes
      FROM records WHERE session_id = ${session.id}`;
    expect(size!.bytes).toBeGreaterThan(MESSAGES * MESSAGE_CHARS);

    // One whole read first: the server's steady state for streaming this journal is the baseline.
    const warm = await readEvents(brain, session.id, "after=0", 60_000);
    expect(warm.events).toHaveLength(size!.records);
    const baseline = await rss();

    const openedAt = Date.now();
    const stalled = await Promise.all(Array.from({ length: READERS }, () => stalledReader(session.id)));
    let peak = baseline;
    const sampling = (async () => {
      while (stallLines().length < READERS && Date.now() - openedAt < STALL_MS + 60_000) {
        peak = Math.max(peak, await rss());
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    // A reader that reads gets the whole journal, in order, once, while the others stall.
    const normal = await readEvents(brain, session.id, "after=0", 60_000);
    expectContiguous(normal.events, 1);
    expect(normal.events).toHaveLength(size!.records);

    await until("every stalled reader to be dropped", async () => stallLines().length >= READERS, STALL_MS + 60_000);
    const droppedAfter = Date.now() - openedAt;
    await sampling;
    const lines = stallLines();
    console.log(
      `slow readers: rss ${Math.round(baseline / 2 ** 20)} MiB → peak ${Math.round(peak / 2 ** 20)} MiB; ` +
        `buffered when dropped: ${lines.map((l) => l.buffered).join(", ")} bytes; all dropped after ${droppedAfter} ms`,
    );
    expect(lines).toHaveLength(READERS);
    for (const line of lines) {
      expect(line.sessionId).toBe(session.id);
      expect(line.buffered).toBeLessThan(BUFFER_BOUND);
    }
    expect(droppedAfter).toBeGreaterThanOrEqual(STALL_MS);
    expect(peak - baseline).toBeLessThan(GROWTH_BOUND);

    // The server really closed them: reading now ends, short of the whole journal.
    const received = await within(Promise.all(stalled.map(drainToClose)), "the dropped streams to close", 30_000);
    for (const bytes of received) expect(bytes).toBeLessThan(size!.bytes);
  }, 240_000);
});

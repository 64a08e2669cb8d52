import { once } from "node:events";
import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { until } from "../../../testkit/wait.js";
import { openHostSocket } from "../../src/host-socket.js";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup.splice(0)) fn();
});

/** A WebSocket server on loopback that records each frame's text and the upgrade's token. */
async function server(): Promise<{ url: string; frames: string[]; authorization: () => string | undefined }> {
  const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await once(wss, "listening");
  const frames: string[] = [];
  let authorization: string | undefined;
  wss.on("connection", (peer: WebSocket, request: IncomingMessage) => {
    authorization = request.headers.authorization;
    peer.on("message", (data) => frames.push(String(data)));
  });
  cleanup.push(() => wss.close());
  const { port } = wss.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}`, frames, authorization: () => authorization };
}

/** Counts the system-call-level writes of a socket (one per _write, one per _writev). */
function countWrites(socket: Socket): () => number {
  let n = 0;
  const raw = socket as unknown as { _write: (...a: unknown[]) => void; _writev?: (...a: unknown[]) => void };
  const write = raw._write.bind(socket);
  const writev = raw._writev?.bind(socket);
  raw._write = (...a: unknown[]) => {
    n++;
    write(...a);
  };
  if (writev) {
    raw._writev = (...a: unknown[]) => {
      n++;
      writev(...a);
    };
  }
  return () => n;
}

describe("openHostSocket", () => {
  it("sends the frames of one tick in one write, with the host's token", async () => {
    const s = await server();
    const ws = openHostSocket(s.url, "host-token", 5_000);
    cleanup.push(() => ws.terminate());
    // 'open' follows 'upgrade' in the same tick: both are awaited from the start.
    const [[response]] = (await Promise.all([once(ws, "upgrade"), once(ws, "open")])) as [[IncomingMessage], unknown];
    const writes = countWrites(response.socket);

    // Three finish frames of invocations that arrived together: one tick, one write.
    ws.send("a");
    ws.send("b");
    ws.send("c");
    await until("three frames", () => s.frames.length === 3);
    expect(s.frames).toEqual(["a", "b", "c"]);
    expect(writes()).toBe(1);
    expect(s.authorization()).toBe("Bearer host-token");

    // Nothing is held past its tick: a later frame goes on its own.
    ws.send("d");
    await until("the fourth frame", () => s.frames.length === 4);
    expect(writes()).toBe(2);
  });
});

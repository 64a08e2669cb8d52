import WebSocket from "ws";
import { encodeFrame } from "./frame-encoding.js";

export interface Heartbeat {
  /** Any frame from Brain proves the connection is alive. */
  alive(): void;
  stop(): void;
}

/**
 * Pings every `heartbeatMs` (the welcome frame's value) and terminates the socket when nothing at
 * all has arrived for twice that long: a half-open TCP connection never closes by itself, and its
 * in-flight calls must be aborted and the host reconnected.
 */
export function startHeartbeat(ws: WebSocket, heartbeatMs: number, nextId: () => number): Heartbeat {
  const watchdog = setTimeout(() => ws.terminate(), 2 * heartbeatMs);
  const ping = setInterval(() => {
    if (ws.readyState === WebSocket.OPEN) ws.send(encodeFrame({ type: "ping" }, nextId()));
  }, heartbeatMs);
  // The socket itself keeps the process alive while connected.
  watchdog.unref();
  ping.unref();
  return {
    alive: () => {
      watchdog.refresh();
    },
    stop: () => {
      clearTimeout(watchdog);
      clearInterval(ping);
    },
  };
}

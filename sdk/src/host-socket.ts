import WebSocket from "ws";
import { corkPerTick, MAX_FRAME_BYTES } from "./contracts.js";

/**
 * The host's WebSocket to Brain, its writes held until the end of each tick. Invocations arrive
 * together (Brain sends a commit's invoke frames in one write), their handlers run in the same
 * tick, and their finish frames would otherwise leave one system call each: under load, a host
 * made two socket writes a tool call, where one write per tick carries them all. Nothing waits
 * past the end of the tick that sent it.
 */
export function openHostSocket(url: string, token: string, handshakeTimeoutMs: number): WebSocket {
  const ws = new WebSocket(url, {
    headers: { authorization: `Bearer ${token}` },
    maxPayload: MAX_FRAME_BYTES,
    handshakeTimeout: handshakeTimeoutMs,
  });
  // The upgrade's response carries the socket the WebSocket then writes to, before any frame.
  ws.once("upgrade", (response) => corkPerTick(response.socket));
  return ws;
}

import type { Socket } from "node:net";

/**
 * Holds a socket's writes until the current tick's work is done, then sends them in one system
 * call (a `writev`). Brain writes in bursts: a committed batch sends the invoke frames and acks of
 * every call in it to the same host, and the journal writer pipelines a transaction's statements.
 * Each write would otherwise be a system call of its own, which on a busy server cost a quarter of
 * its CPU. Nothing waits longer than the end of the tick that wrote it, and a socket that is
 * already holding (corked by its owner, as `ws` does per frame) nests inside.
 *
 * Returns `flush`: sends what the tick has written so far at once, for a frame that should not
 * wait for the rest of the tick's work (an invoke frame, ahead of the commit's bookkeeping).
 */
export function corkPerTick(socket: Socket): () => void {
  const { write, destroy, end } = socket;
  let holding = false;
  const release = () => {
    if (!holding) return;
    holding = false;
    if (!socket.destroyed) socket.uncork();
  };
  // What the tick wrote goes out before the socket closes: an error frame written just before a
  // terminate() (the host is told why) must not be lost with it.
  socket.destroy = function (this: Socket, ...args: Parameters<Socket["destroy"]>) {
    release();
    return destroy.apply(this, args);
  } as Socket["destroy"];
  socket.end = function (this: Socket, ...args: unknown[]) {
    release();
    return (end as (...a: unknown[]) => Socket).apply(this, args);
  } as Socket["end"];
  socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    if (!holding && !socket.destroyed) {
      holding = true;
      socket.cork();
      process.nextTick(release);
    }
    return write.apply(this, args);
  } as Socket["write"];
  return release;
}

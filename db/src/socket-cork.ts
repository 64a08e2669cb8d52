import type { Socket } from "node:net";

/**
 * Holds a socket's writes until the current tick's work is done, then sends them in one system
 * call (a `writev`). Brain writes in bursts: a committed batch sends the invoke frames and acks of
 * every call in it to the same host, and the journal writer pipelines a transaction's statements.
 * Each write would otherwise be a system call of its own, which on a busy server cost a quarter of
 * its CPU. Nothing waits longer than the end of the tick that wrote it, and a socket that is
 * already holding (corked by its owner, as `ws` does per frame) nests inside.
 */
export function corkPerTick(socket: Socket): void {
  const write = socket.write;
  let holding = false;
  const release = () => {
    holding = false;
    if (!socket.destroyed) socket.uncork();
  };
  socket.write = function (this: Socket, ...args: Parameters<Socket["write"]>) {
    if (!holding && !socket.destroyed) {
      holding = true;
      socket.cork();
      process.nextTick(release);
    }
    return write.apply(this, args);
  } as Socket["write"];
}

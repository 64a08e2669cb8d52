import type { ServerResponse } from "node:http";

/** What became of a write: sent on (or buffered within bounds), or the reader is gone. */
export type WriteResult = "ok" | "closed" | "stalled";

/**
 * Writes a streamed response with its memory bounded: once the socket holds more than its
 * high-water mark, the next write waits for it to drain, so what is buffered for one reader is
 * that mark plus one line, never a backlog. A reader that accepts no bytes for `stallMs` while
 * some are waiting (it stopped reading, or its network did) is stalled: its response is
 * destroyed, and the waiting write answers "stalled". A follower with nothing to send is never
 * stalled: only bytes that wait count.
 */
export class BoundedWriter {
  /** What was buffered when the reader was found stalled (for the log line). */
  stalledWith = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly stallMs: number,
  ) {}

  async write(chunk: string): Promise<WriteResult> {
    const res = this.res;
    if (res.destroyed || res.writableEnded) return "closed";
    if (res.write(chunk)) return "ok";
    return this.drained();
  }

  private drained(): Promise<WriteResult> {
    const res = this.res;
    return new Promise((resolve) => {
      // Progress is the buffer shrinking as the kernel takes bytes; its size is sampled a few
      // times per stall period, so a slow but steady reader is never taken for a stalled one.
      let least = res.writableLength;
      let progressAt = Date.now();
      const check = setInterval(
        () => {
          const now = res.writableLength;
          if (now < least) {
            least = now;
            progressAt = Date.now();
          } else if (Date.now() - progressAt >= this.stallMs) {
            this.stalledWith = now;
            finish("stalled");
            res.destroy();
          }
        },
        Math.max(25, Math.min(1_000, this.stallMs / 4)),
      );
      const onDrain = () => finish("ok");
      const onClose = () => finish("closed");
      const finish = (result: WriteResult) => {
        clearInterval(check);
        res.off("drain", onDrain);
        res.off("close", onClose);
        resolve(result);
      };
      res.on("drain", onDrain);
      res.on("close", onClose);
    });
  }
}

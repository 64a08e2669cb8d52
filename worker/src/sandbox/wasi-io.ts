/**
 * wasi:io (error, poll, streams) for one invocation, synchronous in its thread. The worker writes
 * its own WASI rather than using preview2-shim's Node implementation: the shim exposes the worker's
 * environment variables (DATABASE_URL), process.exit, real stdio and unrestricted host paths, and
 * has no read-only mode. Here a component gets exactly what these classes implement.
 *
 * jco calls these methods directly on the objects; a thrown string or plain object becomes the
 * `err` of a `result`, a thrown Error a trap.
 */
import { hrtime } from "node:process";

/** The `err` payload of a stream operation. */
export type StreamError = { tag: "closed" } | { tag: "last-operation-failed"; val: IoError };

export class IoError {
  constructor(private readonly message: string) {}

  toDebugString(): string {
    return this.message;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread until the monotonic clock reaches `ns`; the worker can still terminate it. */
export function sleepUntil(ns: bigint): void {
  for (;;) {
    const left = ns - hrtime.bigint();
    if (left <= 0n) return;
    Atomics.wait(sleeper, 0, 0, Number(left / 1_000_000n) + 1);
  }
}

/** Ready at a monotonic instant (clocks), or always (our streams never wait for I/O). */
export class Pollable {
  constructor(private readonly readyAtNs: bigint | null = null) {}

  ready(): boolean {
    return this.readyAtNs === null || hrtime.bigint() >= this.readyAtNs;
  }

  block(): void {
    if (this.readyAtNs !== null) sleepUntil(this.readyAtNs);
  }

  /** For poll(): when it becomes ready, null if it already is. */
  get pendingUntil(): bigint | null {
    return this.ready() ? null : this.readyAtNs;
  }
}

export const poll = {
  Pollable,
  poll(list: Pollable[]): Uint32Array {
    if (list.length === 0) throw new Error("wasi:io/poll.poll: empty list");
    for (;;) {
      const ready: number[] = [];
      let earliest: bigint | null = null;
      for (const [i, p] of list.entries()) {
        const until = p.pendingUntil;
        if (until === null) ready.push(i);
        else if (earliest === null || until < earliest) earliest = until;
      }
      if (ready.length > 0 || earliest === null) return Uint32Array.from(ready);
      sleepUntil(earliest);
    }
  },
};

/** Where an input stream's bytes come from: null at end of stream. */
export interface ByteSource {
  read(max: number): Uint8Array | null;
}

/** Where an output stream's bytes go. */
export interface ByteSink {
  write(bytes: Uint8Array): void;
}

/** One read or write moves at most this much, so a huge `len` from a guest allocates nothing huge. */
const MAX_CHUNK = 1024 * 1024;

function chunk(len: bigint): number {
  return len > BigInt(MAX_CHUNK) ? MAX_CHUNK : Number(len);
}

const closed: StreamError = { tag: "closed" };

export class InputStream {
  constructor(private readonly source: ByteSource) {}

  read(len: bigint): Uint8Array {
    const bytes = this.source.read(chunk(len));
    if (bytes === null) throw closed;
    return bytes;
  }

  blockingRead(len: bigint): Uint8Array {
    return this.read(len);
  }

  skip(len: bigint): bigint {
    return BigInt(this.read(len).length);
  }

  blockingSkip(len: bigint): bigint {
    return this.skip(len);
  }

  subscribe(): Pollable {
    return new Pollable();
  }
}

export class OutputStream {
  constructor(private readonly sink: ByteSink) {}

  checkWrite(): bigint {
    return BigInt(MAX_CHUNK);
  }

  write(contents: Uint8Array): void {
    this.sink.write(contents);
  }

  blockingWriteAndFlush(contents: Uint8Array): void {
    this.sink.write(contents);
  }

  flush(): void {}

  blockingFlush(): void {}

  subscribe(): Pollable {
    return new Pollable();
  }

  writeZeroes(len: bigint): void {
    this.sink.write(new Uint8Array(chunk(len)));
  }

  blockingWriteZeroesAndFlush(len: bigint): void {
    this.writeZeroes(len);
  }

  splice(source: InputStream, len: bigint): bigint {
    const bytes = source.read(len);
    this.sink.write(bytes);
    return BigInt(bytes.length);
  }

  blockingSplice(source: InputStream, len: bigint): bigint {
    return this.splice(source, len);
  }
}

export const streams = { InputStream, OutputStream };
export const error = { Error: IoError };

/** An input stream that is at its end from the start (stdin). */
export const emptySource: ByteSource = { read: () => null };

import type { FrameChannel } from "../src/execution.js";
import { type CallFrame, encodeFrame, encodeFrameParts, type RequestFrame } from "../src/frame-encoding.js";
import type { Ack } from "../src/pending-acks.js";

type Sent = (CallFrame | RequestFrame) & { id: number };

/**
 * A FrameChannel that records what would go on the wire. It enforces the frame limit exactly as
 * the host connection does (a large result is recorded whole, its parts counted in `parts`); acks are immediate (sequence 100, 101, …) unless `manualAcks` is set,
 * in which case the test settles them with `ack(id)` / `reject(id, error)`.
 */
export class RecordingChannel implements FrameChannel {
  readonly frames: Sent[] = [];
  /** How many WebSocket frames each recorded frame took. */
  readonly parts: number[] = [];
  private nextId = 1;
  private nextSequence = 100;
  private readonly waiting = new Map<number, { resolve(seq: number): void; reject(err: Error): void }>();

  constructor(private readonly manualAcks = false) {}

  send(frame: CallFrame): Promise<number | null> {
    const id = this.nextId++;
    const texts = encodeFrameParts(frame, id);
    const whole = texts.length === 1 ? texts[0]! : texts.map((t) => (JSON.parse(t) as { data: string }).data).join("");
    this.frames.push(JSON.parse(whole) as Sent);
    this.parts.push(texts.length);
    if (!this.manualAcks) return Promise.resolve(this.nextSequence++);
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  /** Request frames are answered with `answer(frame)` (default: a null value). */
  answer: (frame: RequestFrame) => unknown = () => null;

  request(frame: RequestFrame): Promise<Ack> {
    const id = this.nextId++;
    const sent = JSON.parse(encodeFrame(frame, id)) as Sent;
    this.frames.push(sent);
    return Promise.resolve({ sequence: this.nextSequence++, value: this.answer(frame) });
  }

  ack(id: number): void {
    this.waiting.get(id)?.resolve(this.nextSequence++);
    this.waiting.delete(id);
  }

  reject(id: number, error: Error): void {
    this.waiting.get(id)?.reject(error);
    this.waiting.delete(id);
  }

  types(): string[] {
    return this.frames.map((frame) => frame.type);
  }
}

/** Lets queued microtasks and immediate callbacks run (frames are written asynchronously). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

export const SESSION_ID = "6f1d8c2e-2b7a-4f4e-9a55-0d8c3b9f6a11";

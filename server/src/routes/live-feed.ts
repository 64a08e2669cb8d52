import { type LiveDelta, payloadOf, type StoredRecord } from "@aexhq/brain-contracts";

/** Deltas held for calls whose model_call_started the reader has not been sent yet. */
const MAX_HELD = 1_000;

/**
 * The live lines of one event stream (`live=true`), kept consistent with its journal lines: a
 * delta goes out only after its call's model_call_started and never after its model_call_ended,
 * and each call's text goes out once, in order (by offset), whichever way it arrived (the
 * server's snapshot of calls in flight, this server's deltas, other servers' NOTIFYs).
 */
export class LiveFeed {
  /** Per call: the offset its text has been sent up to. */
  private readonly sent = new Map<number, number>();
  private readonly ended = new Set<number>();
  private held: LiveDelta[] = [];

  /** `write` sends a delta, or answers false when the socket is full (the delta is skipped). */
  constructor(private readonly write: (delta: LiveDelta) => boolean) {}

  /** A journal record, just before the stream sends it. */
  saw(record: Pick<StoredRecord, "kind" | "payload">): void {
    const ended = payloadOf(record, "model_call_ended");
    if (!ended) return;
    this.ended.add(ended.call);
    this.sent.delete(ended.call);
  }

  /** A delta; `last`: the last sequence the stream has sent. False: it waits for the journal. */
  offer(delta: LiveDelta, last: number): boolean {
    if (this.ended.has(delta.call)) return true;
    if (delta.call > last) {
      if (this.held.length < MAX_HELD) this.held.push(delta);
      return false;
    }
    const from = this.sent.get(delta.call) ?? 0;
    const end = delta.offset + delta.text.length;
    if (end <= from) return true;
    const next = delta.offset < from ? { ...delta, offset: from, text: delta.text.slice(from - delta.offset) } : delta;
    if (this.write(next)) this.sent.set(delta.call, end);
    return true;
  }

  /** After the journal moved on to `last`: the held deltas it now allows go out. */
  release(last: number): void {
    const held = this.held;
    this.held = [];
    for (const delta of held) this.offer(delta, last);
  }
}

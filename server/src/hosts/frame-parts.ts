import { byteLength, type HostFrame } from "@aexhq/brain-contracts";

type PartFrame = Extract<HostFrame, { type: "part" }>;

/**
 * Slack over the emission budget before collecting stops: the frame's envelope, and `content`,
 * which the budget counts as raw bytes but JSON may escape up to six times over (256 Ki chars).
 */
const COLLECT_SLACK_BYTES = 2 * 1024 * 1024;

/**
 * The most bytes a result-bearing frame (or callback body) may take before it is certainly more
 * than the activation's budget admits: results have no limit of their own beyond it.
 */
export function resultBytesLimit(maxEmittedBytes: number): number {
  return maxEmittedBytes + COLLECT_SLACK_BYTES;
}

/** What one part frame amounts to. */
export type PartStep =
  | { kind: "pending" }
  /** The whole frame's text, ready to be handled like any frame. */
  | { kind: "whole"; text: string; part: PartFrame }
  /** The parts passed anything the budget could admit: collecting stopped (the rest is skipped). */
  | { kind: "over"; part: PartFrame; bytes: number }
  /** A part of another frame arrived before the last one: both are refused. */
  | { kind: "interleaved"; previous: number };

/**
 * Reassembles the parts of one large result-bearing frame (PartFrameSchema). The SDK writes all
 * parts of a frame back to back, so one frame at a time is collected per connection, and a
 * frame's place among the call's frames is where its last part arrived. Memory is bounded by the
 * emission budget: a frame larger than it could ever admit is not kept.
 */
export class PartCollector {
  private current: { id: number; chunks: string[]; bytes: number; over: boolean } | null = null;
  private readonly limit: number;

  constructor(maxEmittedBytes: number) {
    this.limit = resultBytesLimit(maxEmittedBytes);
  }

  add(part: PartFrame): PartStep {
    if (this.current !== null && this.current.id !== part.id) {
      const previous = this.current.id;
      this.current = null;
      return { kind: "interleaved", previous };
    }
    if (this.current === null) this.current = { id: part.id, chunks: [], bytes: 0, over: false };
    const c = this.current;
    if (part.last) this.current = null;
    if (c.over) return { kind: "pending" };
    c.bytes += byteLength(part.data);
    if (c.bytes > this.limit) {
      c.over = true;
      c.chunks = [];
      return { kind: "over", part, bytes: c.bytes };
    }
    c.chunks.push(part.data);
    return part.last ? { kind: "whole", text: c.chunks.join(""), part } : { kind: "pending" };
  }
}

import { channel } from "node:diagnostics_channel";

/**
 * Named points on a tool call's path through the writer, the server and the SDK, published on one
 * `node:diagnostics_channel` so that a subscriber in the same process (the benchmark's hop probe,
 * an APM agent) can time each step between two processes and Postgres. With no subscriber a hop
 * costs one property read: the hot path pays nothing for being observable.
 *
 * The message is the hop's name alone; the subscriber reads its own clock, synchronously, at the
 * moment of publication.
 */
export const HOP_CHANNEL = "aexhq:brain:hop";

/** Every hop, in the order a tool call meets them. */
export const HOPS = [
  /** The journal writer put a batch (BEGIN … COMMIT) on the wire. */
  "writer.batch-sent",
  /** The journal writer read a batch's COMMIT answer, before resolving its writes. */
  "writer.batch-committed",
  /** The server wrote an invoke frame to a host's socket. */
  "server.invoke-sent",
  /** The SDK read a frame off its host socket. */
  "sdk.frame-received",
  /** The SDK parsed and validated that frame. */
  "sdk.frame-parsed",
  /** The SDK started an execution for an invoke frame. */
  "sdk.call-started",
  /** The tool's input passed its schema: the handler is called. */
  "sdk.handler-called",
  /** A result-bearing frame (result, return, finish) is being prepared. */
  "sdk.outcome-sending",
  /** The SDK wrote a frame to its host socket. */
  "sdk.frame-sent",
  /** The server read a frame off a host's socket. */
  "server.frame-received",
  /** The server parsed and validated that frame. */
  "server.frame-parsed",
  /** The server submitted a call report (emit, result, return, finish) to the journal writer. */
  "server.report-submitted",
] as const;

export type Hop = (typeof HOPS)[number];

const hops = channel(HOP_CHANNEL);

/** Publishes a hop when anything listens. */
export function hop(name: Hop): void {
  if (hops.hasSubscribers) hops.publish(name);
}

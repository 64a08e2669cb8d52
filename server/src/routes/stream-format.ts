import type { JournalEvent, LiveDelta } from "@aexhq/brain-contracts";

/** How an event stream spells what it sends: NDJSON of records (events.ts), or another protocol. */
export interface StreamFormat {
  /** What to send for a record (may be ""); `end`: the stream is complete after it. */
  record(event: JournalEvent): { text: string; end?: boolean };
  /** What to send for a live delta (LiveFeed has made it the next piece of its call's text). */
  delta(delta: LiveDelta): string;
}

/** The event stream's own format: one JSON object per line, records and live deltas alike. */
export const ndjson: StreamFormat = {
  record: (event) => ({ text: `${JSON.stringify(event)}\n` }),
  delta: ({ live, kind, call, offset, text }) => `${JSON.stringify({ live, kind, call, offset, text })}\n`,
};

import type { ServerResponse } from "node:http";
import type { JournalEvent } from "@aexhq/brain-contracts";
import { sessionStatus } from "@aexhq/brain-db/ops";
import type { FastifyBaseLogger } from "fastify";
import type { Services } from "../services.js";
import type { JournalPages } from "./journal-pages.js";
import { LiveFeed } from "./live-feed.js";
import type { StreamFormat } from "./stream-format.js";
import { BoundedWriter } from "./stream-writer.js";

export type EventStreamDeps = Pick<Services, "sql" | "bus" | "live" | "config">;

/**
 * One reader of a session's event stream (see events.ts): the journal's pages from `after`, then,
 * with follow, what each commit adds, and with live the text of model calls as it streams.
 */
export class EventStream {
  private last: number;
  private closed = false;
  private reading = false;
  private again = false;
  private finished = false;
  private readonly out: BoundedWriter;
  private readonly feed: LiveFeed | null;
  private unsubscribe = () => {};

  constructor(
    private readonly rt: EventStreamDeps,
    private readonly sessionId: string,
    private readonly res: ServerResponse,
    private readonly pages: JournalPages,
    private readonly options: {
      after: number;
      follow: boolean;
      live: boolean;
      log: FastifyBaseLogger;
      format: StreamFormat;
    },
  ) {
    this.last = options.after;
    this.out = new BoundedWriter(res, rt.config.streamStallMs);
    // A full socket skips live lines rather than buffer them: the journal's text is the truth.
    this.feed = options.live ? new LiveFeed((d) => writeLive(res, options.format.delta(d))) : null;
  }

  /** Subscribes (with follow) and sends the backlog; the stream goes on from the subscriptions. */
  async start(): Promise<void> {
    if (this.options.follow && !this.closed) this.unsubscribe = this.subscribe();
    await this.pump();
  }

  readonly end = (): void => {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    this.res.end();
    // Unsent lines for a reader that stopped reading would keep the socket open.
    if (this.res.writableNeedDrain) this.res.destroy();
  };

  private subscribe(): () => void {
    const offCommits = this.rt.bus.onSession(this.sessionId, () => void this.pump());
    const feed = this.feed;
    if (!feed) return offCommits;
    // In the same tick: no delta can come between the text so far and the next.
    const offLive = this.rt.live.subscribe(this.sessionId, (d) => {
      if (!feed.offer(d, this.last)) void this.pump();
    });
    for (const d of this.rt.live.snapshot(this.sessionId)) feed.offer(d, this.last);
    return () => {
      offCommits();
      offLive();
    };
  }

  /** Sends what the journal holds past `last`; one pass at a time, again if woken meanwhile. */
  private async pump(): Promise<void> {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = true;
    try {
      do {
        this.again = false;
        if (!(await this.sendPages())) return this.end();
        if (!this.options.follow || this.finished) break;
        // Deleted, or ended before the cursor (a stream resumed after session_ended): done.
        const session = await sessionStatus(this.rt.sql, this.sessionId);
        if (!session || (session.status === "ended" && this.last >= session.lastSeq)) this.finished = true;
      } while (this.again && !this.closed && !this.finished);
      if (!this.options.follow || this.finished) this.end();
    } catch (error) {
      this.options.log.warn({ err: error }, "event stream failed");
      this.end();
    } finally {
      this.reading = false;
    }
  }

  /** The pages up to the journal's end now; false when the reader is gone (or stalled). */
  private async sendPages(): Promise<boolean> {
    for (;;) {
      const page = await this.pages.next(this.last);
      for (const r of page.rows) {
        if (this.closed) return false;
        this.feed?.saw(r);
        const event: JournalEvent = {
          sequence: r.seq,
          kind: r.kind,
          payload: r.payload as JournalEvent["payload"],
          createdAt: r.created_at.toISOString(),
        };
        const { text, end } = this.options.format.record(event);
        const written = text === "" ? "ok" : await this.out.write(text);
        if (written === "stalled") this.stalled();
        if (written !== "ok") return false;
        this.last = r.seq;
        if (r.kind === "session_ended" || end) this.finished = true;
        if (end) return true;
      }
      this.feed?.release(this.last);
      if (page.done) return true;
    }
  }

  private stalled(): void {
    const { sessionId, last: sequence } = this;
    const details = { sessionId, sequence, buffered: this.out.stalledWith, stallMs: this.rt.config.streamStallMs };
    this.options.log.warn(details, "event stream reader stalled; closed");
  }
}

/** Writes a live line unless the socket is already full: false, and the line is not sent. */
function writeLive(res: ServerResponse, line: string): boolean {
  if (line === "") return true;
  if (res.writableNeedDrain || res.destroyed || res.writableEnded) return false;
  res.write(line);
  return true;
}

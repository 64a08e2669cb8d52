import { type LiveDelta, storableText } from "@aexhq/brain-contracts";
import { z } from "zod";
import { KeyedListeners } from "./keyed-listeners.js";

/** How long a call's streamed pieces gather before they leave together (in-process and NOTIFY). */
export const LIVE_BATCH_MS = 5;
/** Text per NOTIFY: six bytes a unit at worst once JSON-escaped, under Postgres' 8000-byte cap. */
const MAX_NOTIFY_UNITS = 1_000;
/** Text kept per call in flight, for a follower that joins mid-call; past it, only deltas go on. */
const MAX_KEPT_UNITS = 64 * 1024;
/** Calls whose text is kept; past it the oldest is dropped (its followers see a gap, then the journal). */
const MAX_KEPT_CALLS = 1_000;
/** NOTIFYs waiting to be sent, at most (see LiveText.send). */
const MAX_QUEUED = 1_000;
/** A call kept longer was surely ended by a server that died before saying so. */
const MAX_KEPT_MS = 10 * 60_000;

/** What crosses processes: a delta, or the end of a call's stream (`e`). */
const WireSchema = z.object({
  o: z.string(),
  s: z.string(),
  c: z.number().int().positive(),
  i: z.number().int().min(0),
  t: z.string(),
  e: z.literal(1).optional(),
});

export type SessionDelta = LiveDelta & { sessionId: string };

export interface LiveTextDeps {
  /** This process's id: its own payloads come back on the LISTEN and are dropped. */
  origin: string;
  /** Sends one payload to every server (NOTIFY); a failure loses live text, never a record. */
  notify(payload: string): Promise<void>;
  onError(error: unknown): void;
}

export interface LiveCall {
  /** A piece of the call's text, in order. */
  push(text: string): void;
  /** The provider answered or failed: what is pending leaves, and the kept text is dropped. */
  close(): void;
}

/**
 * Live text of the model calls that stream, on every server: the server running a call batches
 * its pieces for LIVE_BATCH_MS and hands them to this process's followers and, by NOTIFY on the
 * schema's live channel, to every other server's. Each server keeps the text so far of the calls
 * in flight, so a follower that joins (or reconnects) mid-call starts with it. Nothing here is
 * durable: the journal's model_call_ended is the truth, and a lost NOTIFY is a gap a reader sees.
 */
export class LiveText {
  private readonly listeners = new KeyedListeners<[delta: SessionDelta]>();
  /** Text so far of calls in flight, by session then call; insertion order is age. */
  private readonly kept = new Map<string, { sessionId: string; call: number; text: string; at: number }>();
  private sending: Promise<void> = Promise.resolve();
  /** NOTIFYs queued and not yet sent: past MAX_QUEUED (a database away), more are dropped. */
  private queued = 0;

  constructor(private readonly deps: LiveTextDeps) {}

  /** Starts publishing the text of the model call whose model_call_started is `call`. */
  open(sessionId: string, call: number): LiveCall {
    let offset = 0;
    let pending = "";
    let timer: NodeJS.Timeout | undefined;
    const flush = (end: boolean) => {
      clearTimeout(timer);
      timer = undefined;
      // Half a surrogate pair waits for its other half.
      const cut = !end && /[\uD800-\uDBFF]$/.test(pending) ? pending.length - 1 : pending.length;
      const text = storableText(pending.slice(0, cut));
      pending = pending.slice(cut);
      if (text !== "") this.deliver({ sessionId, call, offset, text }, true);
      offset += text.length;
      // A call that streamed nothing (the scripted provider's) costs no NOTIFY at all.
      if (end && offset > 0) this.finish(sessionId, call, offset);
    };
    return {
      push: (text) => {
        pending += text;
        timer ??= setTimeout(() => flush(false), LIVE_BATCH_MS);
      },
      close: () => flush(true),
    };
  }

  /** A payload from another server's NOTIFY. Malformed or our own: ignored. */
  receive(payload: string): void {
    let json: unknown;
    try {
      json = JSON.parse(payload);
    } catch {
      return;
    }
    const wire = WireSchema.safeParse(json);
    if (!wire.success || wire.data.o === this.deps.origin) return;
    const { s: sessionId, c: call, i: offset, t: text } = wire.data;
    if (wire.data.e) this.kept.delete(key(sessionId, call));
    else this.deliver({ sessionId, call, offset, text }, false);
  }

  /** Every delta of the session from now on, this server's and others'. */
  subscribe(sessionId: string, fn: (delta: SessionDelta) => void): () => void {
    return this.listeners.on(sessionId, fn);
  }

  /** The text so far of the session's calls in flight, one delta per call from offset 0. */
  snapshot(sessionId: string): SessionDelta[] {
    const out: SessionDelta[] = [];
    for (const k of this.kept.values()) {
      if (k.sessionId === sessionId && k.text !== "") out.push(delta(sessionId, k.call, 0, k.text));
    }
    return out;
  }

  private deliver(d: { sessionId: string; call: number; offset: number; text: string }, publish: boolean): void {
    this.keep(d.sessionId, d.call, d.offset, d.text);
    this.listeners.emit(d.sessionId, delta(d.sessionId, d.call, d.offset, d.text));
    if (!publish) return;
    for (let i = 0; i < d.text.length; ) {
      let end = Math.min(d.text.length, i + MAX_NOTIFY_UNITS);
      // A surrogate pair stays in one payload.
      if (end < d.text.length && /[\uD800-\uDBFF]/.test(d.text[end - 1]!)) end -= 1;
      this.send({ o: this.deps.origin, s: d.sessionId, c: d.call, i: d.offset + i, t: d.text.slice(i, end) });
      i = end;
    }
  }

  private finish(sessionId: string, call: number, offset: number): void {
    this.kept.delete(key(sessionId, call));
    this.send({ o: this.deps.origin, s: sessionId, c: call, i: offset, t: "", e: 1 });
  }

  /**
   * One at a time, in order: NOTIFYs sent on different connections could overtake each other.
   * Live text is best effort: while the database is away, what cannot be queued is dropped.
   */
  private send(wire: z.infer<typeof WireSchema>): void {
    if (this.queued >= MAX_QUEUED) return;
    this.queued++;
    const payload = JSON.stringify(wire);
    this.sending = this.sending.then(() =>
      this.deps
        .notify(payload)
        .catch((error) => this.deps.onError(error))
        .finally(() => this.queued--),
    );
  }

  private keep(sessionId: string, call: number, offset: number, text: string): void {
    const k = key(sessionId, call);
    const now = Date.now();
    const entry = this.kept.get(k) ?? { sessionId, call, text: "", at: now };
    // Only what continues the kept text is kept: after a gap, a joiner would get a wrong prefix.
    if (offset === entry.text.length && entry.text.length + text.length <= MAX_KEPT_UNITS) entry.text += text;
    if (this.kept.has(k)) return;
    this.kept.set(k, entry);
    for (const [oldest, e] of this.kept) {
      if (this.kept.size <= MAX_KEPT_CALLS && e.at > now - MAX_KEPT_MS) break;
      this.kept.delete(oldest);
    }
  }
}

function key(sessionId: string, call: number): string {
  return `${sessionId}/${call}`;
}

function delta(sessionId: string, call: number, offset: number, text: string): SessionDelta {
  return { sessionId, live: true, kind: "model_text_delta", call, offset, text };
}

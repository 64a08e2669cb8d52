// The clients: one driver per session sends a user message and waits for its turn (wait: true),
// through whichever server is up. Each message has an Idempotency-Key, and a failed attempt is
// retried with the same key (on any server) until answered: the answer's `sequence` (and the
// activation's, when the turn ended) is an acknowledged write, recorded for the checks.
import { setTimeout as sleep } from "node:timers/promises";

export interface ClientAck {
  session: string;
  seq: number;
  kind: "user_message" | "activation_ended";
}

/** A wait: true request that timed out, for a message a later attempt got the sequence of. */
export interface LateWait {
  session: string;
  seq: number;
  /** When the client gave up waiting, and on which server it waited. */
  gaveUpAt: Date;
  url: string;
}

export interface LoadStats {
  messagesAcked: number;
  /** Messages given up on after every retry failed (their outcome unknown to the client). */
  messagesAbandoned: number;
  /** Failed attempts, by HTTP status or error name. */
  failedAttempts: Map<string, number>;
  turns: Map<string, number>;
}

export interface Api {
  token: string;
  /** Base URLs of the servers currently alive. */
  liveUrls(): string[];
}

export class Load {
  readonly acks: ClientAck[] = [];
  readonly lateWaits: LateWait[] = [];
  readonly stats: LoadStats = {
    messagesAcked: 0,
    messagesAbandoned: 0,
    failedAttempts: new Map(),
    turns: new Map(),
  };
  private stopped = false;
  private drivers: Promise<void>[] = [];

  constructor(private readonly api: Api) {}

  start(sessions: string[]): void {
    this.drivers = sessions.map((id) => this.drive(id));
  }

  /** Stops sending new messages; resolves when every driver's last message was answered or given up. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.drivers);
  }

  private async drive(session: string): Promise<void> {
    for (let k = 1; !this.stopped; k++) {
      await this.send(session, `${session}-${k}`, `message ${k}`, 12, true);
      await sleep(100 + Math.floor(Math.random() * 400));
    }
  }

  /** One message, retried with its key until answered; true if it was acknowledged. */
  async send(session: string, key: string, text: string, attempts: number, load = false): Promise<boolean> {
    let gaveUp: { at: Date; url: string } | undefined;
    for (let attempt = 1; attempt <= attempts; attempt++) {
      // Once the load stops, a driver's last message gets a few more tries, not all of them.
      if (load && this.stopped && attempt > 3) break;
      const urls = this.api.liveUrls();
      const url = urls[Math.floor(Math.random() * urls.length)];
      if (url) {
        try {
          const res = await fetch(`${url}/v1/sessions/${session}/messages`, {
            method: "POST",
            headers: {
              authorization: `Bearer ${this.api.token}`,
              "content-type": "application/json",
              "idempotency-key": key,
            },
            body: JSON.stringify({ text, wait: true }),
            signal: AbortSignal.timeout(30_000),
          });
          const body = (await res.json().catch(() => ({}))) as {
            sequence?: number;
            activation?: { sequence: number; status: string } | null;
            error?: { code?: string };
          };
          if (res.status === 201 && typeof body.sequence === "number") {
            this.acks.push({ session, seq: body.sequence, kind: "user_message" });
            if (gaveUp) this.lateWaits.push({ session, seq: body.sequence, gaveUpAt: gaveUp.at, url: gaveUp.url });
            const a = body.activation;
            // A turn reported cancelled may carry the session's last seq rather than an activation_ended.
            if (a && a.status !== "cancelled") this.acks.push({ session, seq: a.sequence, kind: "activation_ended" });
            this.stats.messagesAcked++;
            const status = a?.status ?? "not waited";
            this.stats.turns.set(status, (this.stats.turns.get(status) ?? 0) + 1);
            return true;
          }
          this.count(`${res.status} ${body.error?.code ?? ""}`.trim());
        } catch (error) {
          const timedOut = (error as Error).name === "TimeoutError";
          if (timedOut) gaveUp ??= { at: new Date(), url };
          this.count(timedOut ? "timeout" : "network");
        }
      }
      await sleep(1_000);
    }
    this.stats.messagesAbandoned++;
    return false;
  }

  private count(what: string): void {
    this.stats.failedAttempts.set(what, (this.stats.failedAttempts.get(what) ?? 0) + 1);
  }
}

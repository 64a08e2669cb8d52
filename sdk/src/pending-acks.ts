import { BrainError, isErrorCode } from "./contracts.js";

/** An `ack`: the committed record's sequence and, for request frames, the answer. */
export interface Ack {
  sequence: number | null;
  value: unknown;
}

interface Waiter {
  resolve(ack: Ack): void;
  reject(error: BrainError): void;
}

/** Frames sent on one connection and still waiting for their `ack` or `reject`. */
export class PendingAcks {
  private readonly waiters = new Map<number, Waiter>();

  add(id: number): Promise<Ack> {
    return new Promise((resolve, reject) => {
      this.waiters.set(id, { resolve, reject });
    });
  }

  ack(id: number, sequence: number | null, value?: unknown): void {
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    waiter?.resolve({ sequence, value });
  }

  reject(id: number, error: { code: string; message: string }): void {
    const waiter = this.waiters.get(id);
    this.waiters.delete(id);
    if (waiter === undefined) return;
    waiter.reject(
      isErrorCode(error.code)
        ? new BrainError(error.code, error.message)
        : new BrainError("request_failed", `${error.code}: ${error.message}`, { code: error.code }),
    );
  }

  /** The connection closed: no answer will come for any of them, and none is re-sent. */
  rejectAll(): void {
    const waiters = [...this.waiters.values()];
    this.waiters.clear();
    for (const waiter of waiters) waiter.reject(new BrainError("connection_closed"));
  }
}

import { createHash } from "node:crypto";
import { Worker } from "node:worker_threads";
import { BrainError, exportsToolRun, isComponentBinary } from "@aexhq/brain-contracts";
import type { WitAnswer } from "./wit-thread.js";

export interface Admitted {
  sha256: string;
  size: number;
  wit: string;
}

/** Admissions decoding at once; the rest of the uploads wait for one to finish. */
const DECODING = 2;
/** Uploads a server holds at once (receiving, waiting or decoding); more are answered `busy`. */
const UPLOADS = 6;

/**
 * Component uploads, bounded: at most UPLOADS held at once (each may be 64 MiB in memory), at most
 * DECODING of them decoded at once, each in a thread of its own, off the event loop.
 */
export class Admissions {
  private held = 0;
  private decoding = 0;
  private readonly waiting: (() => void)[] = [];

  /** Takes an upload's place before its body is read; `busy` when the server holds enough. */
  enter(): () => void {
    if (this.held >= UPLOADS) {
      throw new BrainError("busy", `The server is admitting ${this.held} components already; retry shortly.`);
    }
    this.held++;
    let left = false;
    return () => {
      if (!left) this.held--;
      left = true;
    };
  }

  /**
   * Admission: the bytes are what their digest says, a WebAssembly component (not a core module),
   * and it exports the brain:tool world's `run`. Anything else is refused before it is stored, so
   * a worker only ever loads components that can be invoked.
   */
  async admit(bytes: Buffer, expectedSha256: string): Promise<Admitted> {
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    if (sha256 !== expectedSha256) {
      throw new BrainError("invalid_component", `The body's SHA-256 is ${sha256}, not ${expectedSha256}.`);
    }
    if (!isComponentBinary(bytes)) {
      throw new BrainError("invalid_component", "Not a WebAssembly component (a core module, or not WebAssembly).");
    }
    const answer = await this.decode(bytes);
    if (!answer.ok) throw new BrainError("invalid_component", `The component cannot be decoded: ${answer.message}`);
    if (!exportsToolRun(answer.wit)) {
      throw new BrainError("invalid_component", "The component does not export brain:tool@0.2.0's run(invocation).");
    }
    return { sha256, size: bytes.length, wit: answer.wit };
  }

  private async decode(bytes: Buffer): Promise<WitAnswer> {
    while (this.decoding >= DECODING) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.decoding++;
    try {
      return await witInThread(bytes);
    } finally {
      this.decoding--;
      this.waiting.shift()?.();
    }
  }
}

function witInThread(bytes: Buffer): Promise<WitAnswer> {
  return new Promise((resolve) => {
    const thread = new Worker(new URL("./wit-thread.js", import.meta.url), { workerData: bytes, env: {} });
    let answer: WitAnswer | null = null;
    thread.once("message", (message: WitAnswer) => {
      answer = message;
    });
    thread.once("error", (error) => {
      answer ??= { ok: false, message: error.message };
    });
    thread.once("exit", () => resolve(answer ?? { ok: false, message: "the decoder exited without an answer" }));
  });
}

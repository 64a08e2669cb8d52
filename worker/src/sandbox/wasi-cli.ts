/**
 * wasi:cli, wasi:clocks and wasi:random for one invocation. A component sees no environment
 * variables, no arguments and no working directory (the worker's own would leak its
 * DATABASE_URL); stdin is empty; stdout and stderr become bounded diagnostic lines for the
 * worker's log, like telemetry, never journal records.
 */
import { randomBytes } from "node:crypto";
import { hrtime } from "node:process";
import { MAX_DIAGNOSTIC_CHARS } from "./protocol.js";
import { type ByteSink, emptySource, InputStream, OutputStream, Pollable } from "./wasi-io.js";

/** `wasi:cli/exit` called: `run` stops here. An ok status counts as returning from it. */
export class ComponentExit extends Error {
  constructor(readonly ok: boolean) {
    super(ok ? "the component exited" : "the component exited with an error status");
    this.name = "ComponentExit";
  }
}

/** Splits output into lines and hands each (truncated) to `emit`; a partial line waits. */
export function lineSink(emit: (line: string) => void): ByteSink & { flush(): void } {
  const decoder = new TextDecoder();
  let pending = "";
  return {
    write(bytes) {
      pending += decoder.decode(bytes, { stream: true });
      let nl = pending.indexOf("\n");
      while (nl >= 0) {
        emit(pending.slice(0, Math.min(nl, MAX_DIAGNOSTIC_CHARS)));
        pending = pending.slice(nl + 1);
        nl = pending.indexOf("\n");
      }
      // A line that never ends is cut rather than buffered without bound.
      if (pending.length > MAX_DIAGNOSTIC_CHARS) {
        emit(pending.slice(0, MAX_DIAGNOSTIC_CHARS));
        pending = "";
      }
    },
    flush() {
      if (pending.length > 0) emit(pending);
      pending = "";
    },
  };
}

class TerminalInput {}
class TerminalOutput {}

export function cliImports(stdout: ByteSink, stderr: ByteSink) {
  const out = new OutputStream(stdout);
  const err = new OutputStream(stderr);
  return {
    "wasi:cli/environment": {
      getEnvironment: (): [string, string][] => [],
      getArguments: (): string[] => [],
      initialCwd: (): string | undefined => undefined,
    },
    "wasi:cli/exit": {
      exit(status: { tag: "ok" | "err" }): never {
        throw new ComponentExit(status.tag === "ok");
      },
      exitWithCode(code: number): never {
        throw new ComponentExit(code === 0);
      },
    },
    "wasi:cli/stdin": { getStdin: () => new InputStream(emptySource) },
    "wasi:cli/stdout": { getStdout: () => out },
    "wasi:cli/stderr": { getStderr: () => err },
    "wasi:cli/terminal-input": { TerminalInput },
    "wasi:cli/terminal-output": { TerminalOutput },
    // Not a terminal: each of these answers `none`.
    "wasi:cli/terminal-stdin": { getTerminalStdin: (): TerminalInput | undefined => undefined },
    "wasi:cli/terminal-stdout": { getTerminalStdout: (): TerminalOutput | undefined => undefined },
    "wasi:cli/terminal-stderr": { getTerminalStderr: (): TerminalOutput | undefined => undefined },
  };
}

/** A guest asking for more random bytes than this traps rather than making the worker allocate it. */
const MAX_RANDOM_BYTES = 16 * 1024 * 1024;

function randomFill(len: bigint): Uint8Array {
  if (len > BigInt(MAX_RANDOM_BYTES)) throw new Error(`get-random-bytes: ${len} bytes is over the limit`);
  return new Uint8Array(randomBytes(Number(len)));
}

function randomU64(): bigint {
  return randomBytes(8).readBigUInt64LE(0);
}

export function clockAndRandomImports() {
  const random = { getRandomBytes: randomFill, getRandomU64: randomU64 };
  return {
    "wasi:clocks/monotonic-clock": {
      now: () => hrtime.bigint(),
      resolution: () => 1n,
      subscribeInstant: (when: bigint) => new Pollable(when),
      subscribeDuration: (duration: bigint) => new Pollable(hrtime.bigint() + duration),
    },
    "wasi:clocks/wall-clock": {
      now() {
        const ms = Date.now();
        return { seconds: BigInt(Math.floor(ms / 1000)), nanoseconds: (ms % 1000) * 1_000_000 };
      },
      resolution: () => ({ seconds: 0n, nanoseconds: 1_000_000 }),
    },
    "wasi:random/random": random,
    "wasi:random/insecure": { getInsecureRandomBytes: random.getRandomBytes, getInsecureRandomU64: randomU64 },
    "wasi:random/insecure-seed": { insecureSeed: (): [bigint, bigint] => [randomU64(), randomU64()] },
  };
}

import { errorOutcome, type Outcome } from "@aexhq/brain-contracts";

/** The refusal of the egress guard: nothing was sent. Its code is the documented `egress_denied`. */
export class EgressDenied extends Error {
  readonly code = "egress_denied";

  constructor(
    message: string,
    /** What was refused: the host as named, the port, and the kind of address it is or resolves to. */
    readonly details?: { host: string; port: number; range: string },
  ) {
    super(message);
    this.name = "EgressDenied";
  }
}

/**
 * A call's `egress_denied` outcome when `error` is (or wraps) the guard's refusal, else null.
 * `what` says what was not sent ("GET /x", "The tool's URL").
 */
export function deniedOutcome(error: unknown, what: string): Outcome | null {
  const denied = egressDeniedIn(error);
  return denied ? errorOutcome("egress_denied", `${what} was not sent: ${denied.message}`, denied.details) : null;
}

/** The guard's refusal behind an error, however a client wrapped it (fetch's TypeError, say). */
export function egressDeniedIn(error: unknown): EgressDenied | null {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof EgressDenied) return e;
  }
  return null;
}

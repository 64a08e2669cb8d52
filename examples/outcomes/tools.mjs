// One tool per outcome rule of the Tool API. Each comment says what Brain records for it.
import { tool } from "@aexhq/brain";
import { z } from "zod";

const input = z.object({});

/** Ordinary output: wrapped as { status: "ok", value }. A `status` that is not reserved is data. */
export const ordinary = tool({
  name: "ordinary",
  description: "Returns ordinary output.",
  input,
  // `return` publishes one result and ends the synchronous phase (tool_returned); the call stays
  // open for later emissions until it finishes or is interrupted: here, when the session ends.
  run: () => ({ status: "shipped", items: [1, 2] }),
});

/** An explicit ok outcome: its value is data, never read as another envelope, reserved status or not. */
export const explicitOk = tool({
  name: "explicit_ok",
  description: "Finishes with an explicit ok outcome.",
  input,
  run: (_input, ctx) => ctx.finish({ status: "ok", value: { status: "error", note: "just data" } }),
});

/** An error outcome: code, message, retryable and details are kept as given; it ends the call. */
export const errorOutcome = tool({
  name: "error_outcome",
  description: "Returns an error outcome.",
  input,
  run: () => ({
    status: "error",
    error: { code: "quota_exceeded", message: "10 requests per minute", retryable: true, details: { limit: 10 } },
  }),
});

/** A thrown exception ends the call with a tool_error error outcome carrying its message. */
export const throws = tool({
  name: "throws",
  description: "Throws.",
  input,
  run: () => {
    throw new Error("the backend is down");
  },
});

/** An object with a reserved status is an envelope; a malformed one is invalid_output. */
export const malformed = tool({
  name: "malformed",
  description: "Returns a malformed envelope.",
  input,
  run: () => ({ status: "error", error: "not an object" }),
});

/** Values JSON cannot carry (a Date, a bigint, undefined in an array, NaN) are invalid_output. */
export const nonJson = tool({
  name: "non_json",
  description: "Returns a value that is not plain JSON.",
  input,
  run: () => ({ at: new Date(0) }),
});

/** A deadline: Brain ends the call `timeout` (cause deadline) and aborts ctx.signal. */
export const slow = tool({
  name: "slow",
  description: "Outlives its deadline.",
  input,
  timeoutMs: 300,
  run: (_input, ctx) =>
    new Promise((resolve) => {
      ctx.signal.addEventListener("abort", () => {
        console.error(`slow: signal aborted, Brain records ${ctx.signal.reason.details.status}`);
        resolve(undefined);
      });
    }),
});

/** Resolved by main.mjs once the turn is over, to show a background result. */
export const release = { background: () => {} };

/** Return vs finish: returns at once, then emits a result and finishes after the turn ended. */
export const background = tool({
  name: "background",
  description: "Keeps working after returning.",
  input,
  run: (_input, ctx) => {
    const later = new Promise((resolve) => {
      release.background = resolve;
    });
    later.then(async () => {
      await ctx.emitResult({ progress: 100 });
      await ctx.finish();
    });
    return { accepted: true };
  },
});

/** The sequence of the `lingering` call, for main.mjs to cancel it. */
export const calls = { lingering: 0 };

/** Cancelled: returns, then waits until main.mjs cancels the call (session.cancelCall). */
export const lingering = tool({
  name: "lingering",
  description: "Waits to be cancelled.",
  input,
  run: (_input, ctx) => {
    calls.lingering = ctx.sequence;
    ctx.signal.addEventListener("abort", () => {
      console.error(`lingering: signal aborted, Brain records ${ctx.signal.reason.details.status}`);
    });
    return { waiting: true };
  },
});

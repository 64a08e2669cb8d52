import { earliestDeadline, type ToolPlacement } from "@aexhq/brain-contracts";
import type { LoopState } from "./state.js";

/**
 * A tool call's deadline, fixed when the call starts: the earliest of the caller's deadline (the
 * session's and the turn's), the tool's own `timeoutMs` and the operator's cap (BRAIN_MAX_TOOL_SECS,
 * 0 = none), each a bound that only shortens the others. Null, when none applies, is unlimited.
 * It is never renewed: returning, later results or a later activation leave it as it is.
 */
export function callDeadline(
  tool: ToolPlacement | undefined,
  caller: number | null,
  maxToolMs: number,
  now = Date.now(),
): number | null {
  const own = tool?.timeoutMs ?? 0;
  return earliestDeadline(caller, own > 0 ? now + own : null, maxToolMs > 0 ? now + maxToolMs : null);
}

/**
 * The caller's deadline for the calls the current activation makes: the session's, and the turn's
 * when a user message started it. Activations woken by observations (a background tool's later
 * results) belong to no turn, so only the session's applies to the calls they make.
 */
export function callerDeadline(state: LoopState): number | null {
  return earliestDeadline(state.sessionDeadline, state.activation?.deadline);
}

/** Wire limits. Both ends enforce them; the SDK turns an oversize result into an error outcome. */
export const MAX_FRAME_BYTES = 64 * 1024;
/** HTTP bodies (session creation carries every tool's JSON Schema). */
export const MAX_BODY_BYTES = 1024 * 1024;
export const MAX_MESSAGE_CHARS = 256 * 1024;
export const MAX_TOOLS_PER_SESSION = 128;
export const MAX_SCRIPT_STEPS = 100_000;
/** Largest delay a Node timer accepts; longer deadlines are re-armed in steps. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The longest bounded wait (`waitMs`) a message post may ask for. */
export const MAX_MESSAGE_WAIT_MS = 60_000;

import { BrainError, type CallFrameBody, CallFrameResultSchema, type HttpToolInvocation } from "../contracts.js";
import { errorFrom } from "../http-client.js";

export type Callback = HttpToolInvocation["callback"];

/**
 * Serialises a callback frame. Callbacks carry only results and finishes, which have no size limit
 * of their own: Brain answers one past the activation's budget with `budget_exceeded` and ends the
 * call.
 */
export function encodeCallbackFrame(frame: CallFrameBody): string {
  return JSON.stringify(frame);
}

/**
 * POSTs one frame to the call's callback and resolves with the journal sequence Brain answers
 * once the frame has committed: the durable acknowledgment. Brain's refusals keep their codes
 * (call_ended, budget_exceeded, ...); anything else is `request_failed`. Never re-sent.
 */
export async function postCallbackFrame(callback: Callback, text: string): Promise<number> {
  let response: Response;
  try {
    response = await fetch(callback.url, {
      method: "POST",
      headers: { authorization: `Bearer ${callback.token}`, "content-type": "application/json" },
      body: text,
    });
  } catch (err) {
    const reason = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    throw new BrainError("request_failed", `The callback to Brain failed: ${reason}`);
  }
  if (!response.ok) throw await errorFrom(response, "The callback to Brain");
  const parsed = CallFrameResultSchema.safeParse(await response.json().catch(() => null));
  if (!parsed.success) throw new BrainError("request_failed", "Brain acknowledged the callback without a sequence.");
  return parsed.data.sequence;
}

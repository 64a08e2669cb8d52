import { z } from "zod";

/**
 * Live text: a model call's text as the provider streams it, before the call's model_call_ended
 * commits. Not journaled and not durable: a follower that asked for it (`live=true`) gets these
 * lines between the journal's, marked `live`. `call` is the sequence of the model call's
 * model_call_started record and `offset` where `text` starts in the call's text (UTF-16 code
 * units), so a reader that reconnects can tell what it already has: the same call and offset is
 * the same text. Once model_call_ended is in the stream, no more deltas of that call follow; its
 * `text` is the truth. A delta may start past what was sent before (a gap): the reader fell behind,
 * or its server heard of the call late; the committed text fills it.
 */
export const LiveDeltaSchema = z.object({
  live: z.literal(true),
  kind: z.literal("model_text_delta"),
  call: z.number().int().positive(),
  offset: z.number().int().min(0),
  text: z.string(),
});

export type LiveDelta = z.infer<typeof LiveDeltaSchema>;

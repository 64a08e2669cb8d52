import {
  type AttachFrameSchema,
  BrainError,
  byteLength,
  type EmitFrameSchema,
  type EnvironmentFrameSchema,
  type FinishFrameSchema,
  MAX_FRAME_BYTES,
  type ModelFrameSchema,
  type ResultFrameSchema,
  type ReturnFrameSchema,
} from "@aexhq/brain-contracts";
import type { z } from "zod";

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

/** A frame of one tool call, before the connection gives it its request id. */
export type CallFrame = WithoutId<
  | z.infer<typeof EmitFrameSchema>
  | z.infer<typeof ResultFrameSchema>
  | z.infer<typeof ReturnFrameSchema>
  | z.infer<typeof FinishFrameSchema>
>;

/** A frame that asks Brain for something on behalf of a call; its ack carries the answer. */
export type RequestFrame = WithoutId<
  z.infer<typeof ModelFrameSchema> | z.infer<typeof EnvironmentFrameSchema> | z.infer<typeof AttachFrameSchema>
>;

/**
 * Serialises a host frame with its id, refusing it (`frame_too_large`, nothing sent) when it
 * would exceed MAX_FRAME_BYTES: the server would reject it, and a result must become an honest
 * error outcome rather than a lost frame.
 */
export function encodeFrame(frame: CallFrame | RequestFrame | { type: "ping" }, id: number): string {
  return withinFrameLimit(frame.type, JSON.stringify({ ...frame, id }));
}

/** The serialised frame, or `frame_too_large` (nothing is sent) beyond MAX_FRAME_BYTES. */
export function withinFrameLimit(type: string, text: string): string {
  const bytes = byteLength(text);
  if (bytes > MAX_FRAME_BYTES) {
    throw new BrainError("frame_too_large", `The ${type} frame is ${bytes} bytes; the limit is ${MAX_FRAME_BYTES}.`, {
      bytes,
      limit: MAX_FRAME_BYTES,
    });
  }
  return text;
}

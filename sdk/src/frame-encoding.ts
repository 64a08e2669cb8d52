import type { z } from "zod";
import {
  type ApprovalFrameSchema,
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
} from "./contracts.js";

type WithoutId<T> = T extends unknown ? Omit<T, "id"> : never;

/** A frame of one tool call, before the connection gives it its request id. */
export type CallFrame = WithoutId<
  | z.infer<typeof EmitFrameSchema>
  | z.infer<typeof ResultFrameSchema>
  | z.infer<typeof ReturnFrameSchema>
  | z.infer<typeof FinishFrameSchema>
  | z.infer<typeof ApprovalFrameSchema>
>;

/** A frame that asks Brain for something on behalf of a call; its ack carries the answer. */
export type RequestFrame = WithoutId<
  z.infer<typeof ModelFrameSchema> | z.infer<typeof EnvironmentFrameSchema> | z.infer<typeof AttachFrameSchema>
>;

/**
 * Serialises a host frame with its id, refusing it (`frame_too_large`, nothing sent) when it
 * would exceed MAX_FRAME_BYTES: the server would reject it. For pings and tests; call frames go
 * through encodeFrameParts.
 */
export function encodeFrame(frame: CallFrame | RequestFrame | { type: "ping" }, id: number): string {
  return withinFrameLimit(frame.type, JSON.stringify({ ...frame, id }));
}

/** The result-bearing frames: they have no size limit of their own, only the activation's budget. */
const CARRIES_RESULT = new Set(["result", "return", "finish"]);

/**
 * The text frames that carry one host frame. A result, return or finish frame larger than
 * MAX_FRAME_BYTES is sent as consecutive `part` frames (PartFrameSchema), each within the limit;
 * any other frame is one text, or `frame_too_large` (nothing is sent).
 */
export function encodeFrameParts(frame: CallFrame | RequestFrame, id: number): string[] {
  const text = JSON.stringify({ ...frame, id });
  if (byteLength(text) <= MAX_FRAME_BYTES || !CARRIES_RESULT.has(frame.type))
    return [withinFrameLimit(frame.type, text)];
  const { sessionId, sequence } = frame as { sessionId: string; sequence: number };
  const parts: string[] = [];
  let at = 0;
  // Escaping can grow a slice up to six times (control characters), so a slice is halved until
  // its part fits; a slice never ends between the two halves of a surrogate pair.
  let size = 32 * 1024;
  while (at < text.length) {
    let end = Math.min(text.length, at + size);
    if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    const last = end === text.length;
    const part = JSON.stringify({ type: "part", id, sessionId, sequence, data: text.slice(at, end), last });
    if (byteLength(part) > MAX_FRAME_BYTES && size > 16) {
      size = Math.floor(size / 2);
      continue;
    }
    parts.push(part);
    at = end;
  }
  return parts;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
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

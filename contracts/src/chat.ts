import { z } from "zod";

/** Messages a chat request may carry: a UI keeps the whole conversation, Brain reads the last. */
export const MAX_CHAT_MESSAGES = 10_000;
/** Parts of one UI message. */
const MAX_CHAT_PARTS = 1_000;

/** A part of a UI message: Brain reads `text` parts; files, tools and data are the UI's own. */
export const ChatMessagePartSchema = z.looseObject({
  type: z.string().max(128),
  text: z.string().optional(),
});

export const ChatMessageSchema = z.looseObject({
  id: z.string().min(1).max(256),
  role: z.enum(["system", "user", "assistant"]),
  parts: z.array(ChatMessagePartSchema).max(MAX_CHAT_PARTS),
});

/**
 * The body the AI SDK's chat transport posts (`useChat`, `DefaultChatTransport`): the chat's id,
 * its messages and what triggered the request. Brain journals the last message, a user's, as the
 * session's next message, once per UI message id; the conversation itself is the journal's.
 */
export const ChatRequestSchema = z.looseObject({
  id: z.string().max(256).optional(),
  messages: z.array(ChatMessageSchema).min(1).max(MAX_CHAT_MESSAGES),
  trigger: z.enum(["submit-message", "regenerate-message"]).optional(),
  messageId: z.string().max(256).optional(),
});

export type ChatRequest = z.infer<typeof ChatRequestSchema>;

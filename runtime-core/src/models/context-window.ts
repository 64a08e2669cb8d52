import type { ContextNumbers } from "./types.js";

/**
 * Whether a provider's refusal says the conversation is past the model's context window, and the
 * numbers it gave: OpenAI and compatible servers ("maximum context length is 128000 tokens.
 * However, your messages resulted in 130000 tokens", code context_length_exceeded), Anthropic
 * ("prompt is too long: 210000 tokens > 200000 maximum"), Gemini ("The input token count
 * (1200000) exceeds the maximum number of tokens allowed (1048576)"), Bedrock ("Input is too long
 * for requested model"), llama.cpp ("exceeds the available context size"). Null when it is another
 * refusal.
 */
export function contextExceeded(message: string, code: string | undefined): ContextNumbers | null {
  const anthropic = /prompt is too long:\s*(\d+)\s*tokens\s*>\s*(\d+)/i.exec(message);
  if (anthropic) return { tokens: Number(anthropic[1]), window: Number(anthropic[2]) };
  const google = /input token count \(?(\d+)\)? exceeds the maximum number of tokens allowed \(?(\d+)\)?/i.exec(
    message,
  );
  if (google) return { tokens: Number(google[1]), window: Number(google[2]) };
  // Bedrock's ValidationException says no numbers.
  if (/input is too long for requested model/i.test(message)) return {};
  const window = /maximum context length is\s*(\d+)/i.exec(message);
  const tokens = /(?:resulted in|requested|you have)\s*(\d+)\s*tokens/i.exec(message);
  if (
    window ||
    code === "context_length_exceeded" ||
    /exceeds? the (?:available )?context (?:size|window|length)/i.test(message)
  ) {
    return {
      ...(tokens ? { tokens: Number(tokens[1]) } : {}),
      ...(window ? { window: Number(window[1]) } : {}),
    };
  }
  return null;
}

import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3ToolResultPart,
} from "@ai-sdk/provider";
import type { ModelMessage, ProviderRequest } from "./types.js";

type JsonSchema = LanguageModelV3FunctionTool["inputSchema"];

/**
 * A Brain model request as the AI SDK's provider interface takes it (LanguageModelV3): the system
 * prompt first, user and assistant turns with their tool calls, and each run of tool results as
 * one tool message (providers that want turns to alternate get them so).
 */
export function callOptions(request: ProviderRequest, maxTokens: number | undefined): LanguageModelV3CallOptions {
  const prompt: LanguageModelV3Message[] = [];
  if (request.system) prompt.push({ role: "system", content: request.system });
  for (const message of request.messages) {
    const last = prompt[prompt.length - 1];
    if (message.role === "tool" && last?.role === "tool") last.content.push(toolResult(message));
    else prompt.push(promptMessage(message));
  }
  const options: LanguageModelV3CallOptions = { prompt };
  if (request.tools.length > 0) {
    options.tools = request.tools.map((t) => ({
      type: "function",
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema as JsonSchema,
    }));
  }
  const tokens = request.maxTokens ?? maxTokens;
  if (tokens !== undefined) options.maxOutputTokens = tokens;
  const format = request.responseFormat;
  if (format?.type === "json") {
    options.responseFormat = format.schema ? { type: "json", schema: format.schema as JsonSchema } : { type: "json" };
  }
  return options;
}

function promptMessage(message: ModelMessage): LanguageModelV3Message {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: message.content }] };
    case "tool":
      return { role: "tool", content: [toolResult(message)] };
    case "assistant": {
      const text = message.content === "" ? [] : [{ type: "text" as const, text: message.content }];
      const calls = (message.toolCalls ?? []).map((c) => ({
        type: "tool-call" as const,
        toolCallId: c.id,
        toolName: c.name,
        input: c.input,
      }));
      return { role: "assistant", content: [...text, ...calls] };
    }
  }
}

function toolResult(message: Extract<ModelMessage, { role: "tool" }>): LanguageModelV3ToolResultPart {
  return {
    type: "tool-result",
    toolCallId: message.toolCallId,
    toolName: message.name,
    output: { type: "text", value: message.content },
  };
}

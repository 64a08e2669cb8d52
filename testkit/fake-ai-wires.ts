// Wire formats of the providers Brain reaches through the AI SDK's packages, for the fakes in
// fake-ai-providers.ts: Google Gemini's streamGenerateContent (SSE), OpenAI's Responses API (SSE;
// Azure OpenAI speaks it too) and Amazon Bedrock's ConverseStream (AWS event-stream frames, each
// with its CRCs). Written from the providers' documented formats, not from the SDK's parsers.
import { crc32 } from "node:zlib";
import { answerText, argumentText, data, errorType, pieces, usageOf, type Wire } from "./fake-provider-wire.js";

const chunkOf = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
  candidates: [{ content: { role: "model", parts }, index: 0, ...extra }],
});

export const geminiWire: Wire = {
  idPrefix: "gemini",
  first: () => data(chunkOf([{ text: "" }])),
  stream(answer) {
    const size = answer.pieceChars ?? 3;
    const events: string[] = [geminiWire.first("") as string];
    for (const piece of pieces(answer.reasoning ?? "", size))
      events.push(data(chunkOf([{ text: piece, thought: true }])));
    for (const piece of pieces(answerText(answer), size)) events.push(data(chunkOf([{ text: piece }])));
    const calls = (answer.toolCalls ?? []).map((c) => ({ functionCall: { name: c.name, args: c.input ?? {} } }));
    if (calls.length > 0) events.push(data(chunkOf(calls)));
    const { input, output, cacheRead } = usageOf(answer);
    const finishReason = answer.stopReason ?? "STOP";
    const usageMetadata = {
      promptTokenCount: input,
      candidatesTokenCount: output,
      totalTokenCount: input + output,
      ...(cacheRead ? { cachedContentTokenCount: cacheRead } : {}),
    };
    events.push(data({ ...chunkOf([{ text: "" }], { finishReason }), usageMetadata }));
    return events;
  },
  json: () => ({ error: { code: 400, message: "the fake answers streams only", status: "INVALID_ARGUMENT" } }),
  partial: (text) => [geminiWire.first("") as string, ...pieces(text, 3).map((p) => data(chunkOf([{ text: p }])))],
  streamError: (error) => data({ error: { code: 500, message: error.message, status: error.type } }),
  errorBody: (status, message) => ({ error: { code: status, message, status: googleStatus(status) } }),
};

function googleStatus(status: number): string {
  if (status === 401) return "UNAUTHENTICATED";
  if (status === 403) return "PERMISSION_DENIED";
  if (status === 429) return "RESOURCE_EXHAUSTED";
  if (status >= 500) return "UNAVAILABLE";
  return "INVALID_ARGUMENT";
}

const responseEvent = (type: string, value: Record<string, unknown>) =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...value })}\n\n`;

export const responsesWire: Wire = {
  idPrefix: "call",
  first: (model) => responseEvent("response.created", { response: { id: "resp_fake", created_at: 0, model } }),
  stream(answer, ids, model) {
    const size = answer.pieceChars ?? 3;
    const events = [responsesWire.first(model) as string];
    const text = answerText(answer);
    let index = 0;
    if (text !== "") {
      events.push(
        responseEvent("response.output_item.added", { output_index: index, item: { type: "message", id: "msg_1" } }),
      );
      for (const piece of pieces(text, size)) {
        events.push(
          responseEvent("response.output_text.delta", { item_id: "msg_1", output_index: index, delta: piece }),
        );
      }
      events.push(
        responseEvent("response.output_item.done", { output_index: index, item: { type: "message", id: "msg_1" } }),
      );
      index++;
    }
    for (const [i, call] of (answer.toolCalls ?? []).entries()) {
      const item = { type: "function_call", id: `fc_${i}`, call_id: ids[i], name: call.name, arguments: "" };
      events.push(responseEvent("response.output_item.added", { output_index: index, item }));
      for (const piece of pieces(argumentText(call), size)) {
        events.push(
          responseEvent("response.function_call_arguments.delta", {
            item_id: `fc_${i}`,
            output_index: index,
            delta: piece,
          }),
        );
      }
      const done = { ...item, arguments: argumentText(call), status: "completed" };
      events.push(responseEvent("response.output_item.done", { output_index: index, item: done }));
      index++;
    }
    const { input, output, cacheRead } = usageOf(answer);
    const usage = {
      input_tokens: input,
      output_tokens: output,
      ...(cacheRead ? { input_tokens_details: { cached_tokens: cacheRead } } : {}),
    };
    const incomplete = answer.stopReason ? { incomplete_details: { reason: answer.stopReason } } : {};
    const type = answer.stopReason ? "response.incomplete" : "response.completed";
    events.push(responseEvent(type, { response: { ...incomplete, usage } }));
    return events;
  },
  json: () => ({ error: { message: "the fake answers streams only", type: "invalid_request_error" } }),
  partial: (text, model) => [
    responsesWire.first(model) as string,
    responseEvent("response.output_item.added", { output_index: 0, item: { type: "message", id: "msg_1" } }),
    ...pieces(text, 3).map((p) =>
      responseEvent("response.output_text.delta", { item_id: "msg_1", output_index: 0, delta: p }),
    ),
  ],
  streamError: (error) => responseEvent("error", { code: error.type, message: error.message, sequence_number: 1 }),
  errorBody: (status, message) => ({ error: { message, type: errorType(status), code: null } }),
};

/**
 * One AWS event-stream message: total length, headers length and the prelude's CRC32, then the
 * headers (name, type 7 = string, value), the payload and the whole message's CRC32.
 */
export function eventStreamMessage(headers: Record<string, string>, payload: unknown): Uint8Array {
  const encodedHeaders = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name, "utf8");
      const v = Buffer.from(value, "utf8");
      const length = Buffer.alloc(2);
      length.writeUInt16BE(v.length);
      return Buffer.concat([Buffer.from([n.length]), n, Buffer.from([7]), length, v]);
    }),
  );
  const body = Buffer.from(JSON.stringify(payload), "utf8");
  const total = 12 + encodedHeaders.length + body.length + 4;
  const prelude = Buffer.alloc(8);
  prelude.writeUInt32BE(total, 0);
  prelude.writeUInt32BE(encodedHeaders.length, 4);
  const preludeCrc = Buffer.alloc(4);
  preludeCrc.writeUInt32BE(crc32(prelude));
  const message = Buffer.concat([prelude, preludeCrc, encodedHeaders, body]);
  const messageCrc = Buffer.alloc(4);
  messageCrc.writeUInt32BE(crc32(message));
  return new Uint8Array(Buffer.concat([message, messageCrc]));
}

const bedrockEvent = (type: string, payload: unknown) =>
  eventStreamMessage({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, payload);

export const bedrockWire: Wire = {
  idPrefix: "tooluse",
  first: () => bedrockEvent("messageStart", { role: "assistant" }),
  stream(answer, ids) {
    const size = answer.pieceChars ?? 3;
    const events: Uint8Array[] = [bedrockEvent("messageStart", { role: "assistant" })];
    let block = 0;
    const text = answerText(answer);
    if (text !== "") {
      for (const piece of pieces(text, size)) {
        events.push(bedrockEvent("contentBlockDelta", { contentBlockIndex: block, delta: { text: piece } }));
      }
      events.push(bedrockEvent("contentBlockStop", { contentBlockIndex: block++ }));
    }
    for (const [i, call] of (answer.toolCalls ?? []).entries()) {
      const start = { toolUse: { toolUseId: ids[i], name: call.name } };
      events.push(bedrockEvent("contentBlockStart", { contentBlockIndex: block, start }));
      for (const piece of pieces(argumentText(call), size)) {
        const delta = { toolUse: { input: piece } };
        events.push(bedrockEvent("contentBlockDelta", { contentBlockIndex: block, delta }));
      }
      events.push(bedrockEvent("contentBlockStop", { contentBlockIndex: block++ }));
    }
    const stopReason = answer.stopReason ?? (answer.toolCalls?.length ? "tool_use" : "end_turn");
    events.push(bedrockEvent("messageStop", { stopReason }));
    const { input, output, cacheRead } = usageOf(answer);
    const usage = {
      inputTokens: input,
      outputTokens: output,
      totalTokens: input + output,
      ...(cacheRead ? { cacheReadInputTokens: cacheRead } : {}),
    };
    events.push(bedrockEvent("metadata", { usage, metrics: { latencyMs: 1 } }));
    return events;
  },
  json: () => ({ message: "the fake answers streams only" }),
  partial: (text) => [
    bedrockEvent("messageStart", { role: "assistant" }),
    ...pieces(text, 3).map((p) => bedrockEvent("contentBlockDelta", { contentBlockIndex: 0, delta: { text: p } })),
  ],
  streamError: (error) =>
    eventStreamMessage(
      {
        ":exception-type": "modelStreamErrorException",
        ":content-type": "application/json",
        ":message-type": "exception",
      },
      { message: error.message },
    ),
  errorBody: (_status, message) => ({ message }),
};

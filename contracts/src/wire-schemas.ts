import { z } from "zod";
import {
  ConsoleCallListSchema,
  ConsoleHostListSchema,
  ConsoleProcessListSchema,
  ConsoleSessionListSchema,
} from "./console.js";
import { HostFrameSchema, ServerFrameSchema } from "./frames.js";
import {
  CallFrameBodySchema,
  CallFrameResultSchema,
  CancelCallResultSchema,
  CancelTurnResultSchema,
  CreateSessionBodySchema,
  ErrorBodySchema,
  HttpToolInvocationSchema,
  JournalEventSchema,
  PostMessageBodySchema,
  PostMessageResultSchema,
  RegisteredHostSchema,
  RegisteredReplicaSchema,
  RegisterHostBodySchema,
  ServeHostBodySchema,
  SessionListSchema,
  SessionSchema,
  SessionToolsSchema,
} from "./http.js";
import { LiveDeltaSchema } from "./live.js";
import { OutcomeSchema } from "./outcome.js";
import { AppTokenListSchema, AppTokenSchema, CreatedTokenSchema, CreateTokenBodySchema } from "./tokens.js";

/** Every wire type, by the file name of its checked-in JSON Schema (contracts/json-schema/). */
export const wireSchemas: Record<string, z.ZodType> = {
  "create-session-body": CreateSessionBodySchema,
  session: SessionSchema,
  "session-list": SessionListSchema,
  "post-message-body": PostMessageBodySchema,
  "post-message-result": PostMessageResultSchema,
  "journal-event": JournalEventSchema,
  "live-delta": LiveDeltaSchema,
  "register-host-body": RegisterHostBodySchema,
  "registered-host": RegisteredHostSchema,
  "serve-host-body": ServeHostBodySchema,
  "registered-replica": RegisteredReplicaSchema,
  "error-body": ErrorBodySchema,
  "cancel-turn-result": CancelTurnResultSchema,
  "cancel-call-result": CancelCallResultSchema,
  "session-tools": SessionToolsSchema,
  "create-token-body": CreateTokenBodySchema,
  "created-token": CreatedTokenSchema,
  "app-token": AppTokenSchema,
  "app-token-list": AppTokenListSchema,
  "http-tool-invocation": HttpToolInvocationSchema,
  "call-frame-body": CallFrameBodySchema,
  "call-frame-result": CallFrameResultSchema,
  outcome: OutcomeSchema,
  "host-frame": HostFrameSchema,
  "server-frame": ServerFrameSchema,
  "console-session-list": ConsoleSessionListSchema,
  "console-call-list": ConsoleCallListSchema,
  "console-host-list": ConsoleHostListSchema,
  "console-process-list": ConsoleProcessListSchema,
};

export function renderJsonSchema(schema: z.ZodType): string {
  return `${JSON.stringify(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }), null, 2)}\n`;
}

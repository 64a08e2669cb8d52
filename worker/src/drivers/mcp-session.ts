/**
 * One MCP Environment call's connection to its remote server: Streamable HTTP with the binding's
 * sealed headers (opened here, kept in memory for this call only), redirects refused so the headers
 * never reach another origin. A resumed call reconnects to the MCP session its task was created in
 * (the journaled session id and protocol version) instead of initializing a new one, since servers
 * may scope tasks to the session. Also the mapping of a CallToolResult to Brain's outcome.
 */
import { errorOutcome, type Outcome } from "@aexhq/brain-contracts";
import { cappedFetch, deniedOutcome, type Upstream } from "@aexhq/brain-core/egress";
import { redact, secretsOf } from "@aexhq/brain-core/environments";
import type { Sql } from "@aexhq/brain-db/connect";
import { mcpSecret, readSecret, secretAad } from "@aexhq/brain-db/ops";
import type { SecretBox } from "@aexhq/brain-db/secrets";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** What a task-running call journals (calls.resume and its `brain.mcp_task` record). */
export const McpTaskPointSchema = z.object({
  taskId: z.string().min(1).max(1024),
  sessionId: z.string().max(1024).nullable(),
  protocolVersion: z.string().max(64).nullable(),
});
export type McpTaskPoint = z.infer<typeof McpTaskPointSchema>;

/** The task point a claimed call carries, if an earlier worker left it resumable. */
export function resumePointOf(resume: unknown): McpTaskPoint | null {
  const parsed = z.object({ mcpTask: McpTaskPointSchema }).safeParse(resume);
  return parsed.success ? parsed.data.mcpTask : null;
}

export interface McpConnection {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The header values to scrub from whatever the server answers. */
  secrets: string[];
  /** Whether an answer passed the byte cap (the connection was closed then). */
  overflowed(): boolean;
  close(): Promise<void>;
}

const HeadersSchema = z.record(z.string(), z.string());

/** The binding's headers, opened from session_secrets (bound to session and name by the AAD). */
export async function mcpHeaders(
  deps: { sql: Sql; secrets: SecretBox },
  sessionId: string,
  environment: string,
): Promise<Record<string, string>> {
  const name = mcpSecret(environment);
  const sealed = await readSecret(deps.sql, sessionId, name);
  if (!sealed) return {};
  return HeadersSchema.parse(JSON.parse(deps.secrets.open(sealed, secretAad(sessionId, name))));
}

/**
 * Connects (initialize, or rejoins `resume`'s MCP session). A failure here sent nothing that
 * could have run the tool. `terminate`: whether closing ends the MCP session (not while a task
 * another worker may resume lives in it).
 */
export async function connectMcp(
  url: string,
  headers: Record<string, string>,
  signal: AbortSignal,
  resume: McpTaskPoint | null,
  network: Upstream,
): Promise<McpConnection> {
  const client = new Client({ name: "brain-worker", version: "0.1.0" });
  let overflowed = false;
  // Past the cap the body errors; an answer read as a stream might only report it to onerror, so
  // the connection closes too, which ends every request waiting on it.
  const fetch = cappedFetch(network.fetch, network.maxAnswerBytes, () => {
    overflowed = true;
    queueMicrotask(() => void client.close().catch(() => {}));
    return new Error(`the MCP server answered more than ${network.maxAnswerBytes} bytes`);
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch,
    requestInit: { headers, redirect: "error" },
    ...(resume?.sessionId ? { sessionId: resume.sessionId } : {}),
  });
  if (resume?.protocolVersion) transport.setProtocolVersion(resume.protocolVersion);
  await client.connect(transport, { signal, timeout: 30_000 });
  return {
    client,
    transport,
    secrets: secretsOf(headers),
    overflowed: () => overflowed,
    async close() {
      await client.close().catch(() => {});
    },
  };
}

/** Ends the MCP session on the server (DELETE), once nothing in it is needed any more. */
export async function endMcpSession(connection: McpConnection): Promise<void> {
  await connection.transport.terminateSession().catch(() => {});
}

/**
 * A CallToolResult as Brain's outcome: `isError` is an error outcome (`mcp_tool_error`, its text
 * the message, its content the details); otherwise `structuredContent` is the value (null when
 * the tool gave none) and the text content is the result's `content`, what the model reads.
 */
export function outcomeOfResult(result: CallToolResult, secrets: string[]): { outcome: Outcome; content?: string } {
  const clean = redact(result, secrets);
  const texts = (clean.content ?? []).flatMap((c) => (c.type === "text" ? [c.text] : []));
  const text = texts.join("\n");
  if (clean.isError) {
    return {
      outcome: errorOutcome("mcp_tool_error", (text || "The MCP tool reported an error.").slice(0, 8192), {
        content: clean.content ?? [],
      }),
    };
  }
  const outcome: Outcome = { status: "ok", value: (clean.structuredContent ?? null) as never };
  return texts.length > 0 ? { outcome, content: text } : { outcome };
}

/** An MCP failure as an error outcome (`mcp_error`), with the header values scrubbed. */
export function mcpError(message: string, secrets: string[]): Outcome {
  return errorOutcome("mcp_error", redact(message, secrets).slice(0, 8192));
}

/** What a call's MCP exchange ends with: the outcome, and for ok results the text content. */
export interface Answer {
  outcome: Outcome;
  content?: string | undefined;
}

/** A request without a deadline waits this long for its answer (the SDK's default is 60 s). */
const NO_DEADLINE_WAIT_MS = 24 * 3600 * 1000;

/** The remaining time to the call's deadline, as a request timeout. */
export function waitFor(deadline: number | null): number {
  return deadline === null ? NO_DEADLINE_WAIT_MS : Math.max(1, deadline - Date.now() + 1000);
}

/**
 * After the request went out, a JSON-RPC error is the server's answer (the call is refused); a
 * broken connection or a lost answer leaves it unknown whether the tool ran. An answer past the
 * byte cap is `answer_too_large`; a request the egress guard refused was never sent.
 */
export function failedRequest(error: unknown, connection: Pick<McpConnection, "secrets" | "overflowed">): Outcome {
  const { secrets } = connection;
  const message = (error as Error).message ?? String(error);
  if (connection.overflowed()) {
    return errorOutcome("answer_too_large", redact(`The MCP server's answer was too large: ${message}`, secrets));
  }
  const denied = deniedOutcome(error, "The MCP request");
  if (denied) return denied;
  // -32000 (connection closed) and -32001 (request timeout) are the SDK's own, not the server's.
  if (error instanceof McpError && error.code !== -32000 && error.code !== -32001) {
    return mcpError(`The MCP server refused the call: ${message}`, secrets);
  }
  return {
    status: "unknown",
    cause: "connection_lost",
    message: redact(`The MCP request failed without an answer: ${message}`, secrets).slice(0, 8192),
  };
}

/**
 * MCP Environments at placement: for each of a session's `mcpServers`, the server connects to the
 * remote MCP server (Streamable HTTP, with the binding's headers), reads its `tools/list` and turns
 * the chosen tools into ordinary placements: the advertised description, input and output schemas
 * (what the model is shown and what the journal keeps), the tool's name there and whether it may
 * run as a task. Nothing is stored when any server fails: the whole creation is refused.
 */
import {
  BrainError,
  findUnstorable,
  MAX_BODY_BYTES,
  McpImplementationSchema,
  type McpServerSpec,
  TOOL_NAME_PATTERN,
  type ToolPlacement,
  ToolPlacementSchema,
} from "@aexhq/brain-contracts";
import { cappedFetch, egressDeniedIn, type Upstream } from "@aexhq/brain-core/egress";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";

/** A placement's `tools/list` (all pages) must answer within this. */
export const MCP_LIST_TIMEOUT_MS = 15_000;
/** Pages of tools/list read at most (a server that pages forever is not followed forever). */
const MAX_PAGES = 20;

export async function placeMcpTools(servers: readonly McpServerSpec[], network: Upstream): Promise<ToolPlacement[]> {
  const lists = await Promise.all(servers.map(async (s) => ({ spec: s, tools: await listTools(s, network) })));
  return lists.flatMap(({ spec, tools }) => {
    const placed = placementsOf(spec, tools).map((p) => admitted(spec, p));
    // What a remote server advertises is bounded like what a caller may send in a body.
    const bytes = Buffer.byteLength(JSON.stringify(placed), "utf8");
    if (bytes > MAX_BODY_BYTES) {
      throw new BrainError(
        "mcp_unavailable",
        `MCP server ${JSON.stringify(spec.name)} advertises ${bytes} bytes of tools; at most ${MAX_BODY_BYTES} are placed.`,
      );
    }
    return placed;
  });
}

/** What a remote server advertises is hostile input: it must be a placement Brain can store. */
function admitted(spec: McpServerSpec, placement: ToolPlacement): ToolPlacement {
  const parsed = ToolPlacementSchema.safeParse(placement);
  const where = parsed.success ? findUnstorable(parsed.data, "$") : "$";
  if (!parsed.success || where !== null) {
    throw new BrainError(
      "mcp_unavailable",
      `MCP server ${JSON.stringify(spec.name)} advertises tool ${JSON.stringify(placement.name)} with a description or schema Brain cannot store.`,
    );
  }
  return parsed.data;
}

async function listTools(spec: McpServerSpec, network: Upstream): Promise<Tool[]> {
  const client = new Client({ name: "brain", version: "0.1.0" });
  const abort = new AbortController();
  // An answer past the cap errors its body and stops the listing: a server that streams without
  // end costs a bounded amount of memory.
  const fetch = cappedFetch(network.fetch, network.maxAnswerBytes, () => {
    abort.abort(new Error(`the MCP server answered more than ${network.maxAnswerBytes} bytes`));
    return abort.signal.reason as Error;
  });
  // Redirects are refused, so the binding's headers never reach another origin.
  const transport = new StreamableHTTPClientTransport(new URL(spec.url), {
    fetch,
    requestInit: { headers: spec.headers ?? {}, redirect: "error" },
  });
  const signal = AbortSignal.any([abort.signal, AbortSignal.timeout(MCP_LIST_TIMEOUT_MS)]);
  try {
    await client.connect(transport, { signal, timeout: MCP_LIST_TIMEOUT_MS });
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const answer = await client.listTools(cursor === undefined ? {} : { cursor }, {
        signal,
        timeout: MCP_LIST_TIMEOUT_MS,
      });
      tools.push(...answer.tools);
      cursor = answer.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } catch (error) {
    const denied = egressDeniedIn(error);
    if (denied) throw new BrainError("egress_denied", `MCP server ${JSON.stringify(spec.name)}: ${denied.message}`);
    const reason = abort.signal.aborted ? abort.signal.reason : error;
    throw new BrainError(
      "mcp_unavailable",
      `MCP server ${JSON.stringify(spec.name)}: tools/list failed: ${redacted(String((reason as Error).message ?? reason), spec)}`.slice(
        0,
        2000,
      ),
    );
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

/** Header values never appear in an error message, even if the remote server echoes them. */
function redacted(text: string, spec: McpServerSpec): string {
  let out = text;
  for (const v of Object.values(spec.headers ?? {})) if (v.length >= 8) out = out.split(v).join("[redacted]");
  return out;
}

function placementsOf(spec: McpServerSpec, tools: Tool[]): ToolPlacement[] {
  const byName = new Map(tools.map((t) => [t.name, t]));
  const prefix = spec.prefix ?? "";
  if (spec.only) {
    for (const name of spec.only) {
      if (!byName.has(name)) {
        throw new BrainError(
          "mcp_tool_not_found",
          `MCP server ${JSON.stringify(spec.name)} does not advertise a tool ${JSON.stringify(name)}.`,
        );
      }
      if (!TOOL_NAME_PATTERN.test(prefix + name)) {
        throw new BrainError(
          "mcp_tool_not_found",
          `MCP tool ${JSON.stringify(prefix + name)}: a model accepts only names matching ${TOOL_NAME_PATTERN}.`,
        );
      }
    }
  }
  // Without `only`, tools whose names no model accepts are left out rather than failing the session.
  const chosen = spec.only
    ? spec.only.map((n) => byName.get(n) as Tool)
    : tools.filter((t) => TOOL_NAME_PATTERN.test(prefix + t.name));
  return chosen.map((t) => {
    const implementation = McpImplementationSchema.parse({
      type: "mcp",
      url: spec.url,
      tool: t.name,
      taskSupport: t.execution?.taskSupport ?? "forbidden",
    });
    const placement: ToolPlacement = {
      name: prefix + t.name,
      description: (t.description ?? t.title ?? t.name).slice(0, 4096),
      inputSchema: t.inputSchema as ToolPlacement["inputSchema"],
      outputSchema: (t.outputSchema ?? null) as ToolPlacement["outputSchema"],
      env: { type: "mcp", name: spec.name },
      implementation,
    };
    if (spec.timeoutMs !== undefined) placement.timeoutMs = spec.timeoutMs;
    return placement;
  });
}

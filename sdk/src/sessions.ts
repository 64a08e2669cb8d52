import { isDeepStrictEqual } from "node:util";
import {
  BrainError,
  type CreateSessionBody,
  CreateSessionBodySchema,
  type EnvironmentControl,
  type EnvironmentSpec,
  ForkSessionBodySchema,
  type McpServerSpec,
  type ModelConfig,
  type ScriptStep,
  SessionListSchema,
  SessionSchema,
  SessionToolsSchema,
} from "./contracts.js";
import { APPLICATION_ENV, environmentSpecOf } from "./environment.js";
import { isMcpTools, type McpTools, mcpServerSpecOf } from "./mcp.js";
import { placementDifferences } from "./reattach.js";
import { type RequestOptions, Session, type SessionDeps } from "./session.js";
import { componentOf, isPlacedTool, type PlacedTool } from "./tool.js";

export interface ForkOptions {
  /** The last record of the source the fork keeps. */
  at: number;
  /** Another model for the fork (its credentials sealed for the fork); absent: the source's. */
  model?: ModelConfig;
  /** Another system prompt for the fork's turns; absent: the source's. */
  system?: string;
  /** The fork's host tools, served by this client (the same declarations as the source's). */
  tools?: PlacedTool[];
}

export interface ReplayOptions {
  /** The last record of the recorded session the replay keeps. */
  at: number;
  /** The scripted model's answers, from the fork on. */
  script: ScriptStep[];
  toolScript?: ScriptStep[];
  tools?: PlacedTool[];
}

export interface CreateSessionParams {
  /**
   * The session's fixed provider, model and credentials: `{ provider, name, apiKey, baseUrl? }` for
   * `openai`, `anthropic`, `openai-responses`, `google`, `azure` (with `resourceName`) and
   * `openai-compatible`, Bedrock's `{ provider: "bedrock", name, region, accessKeyId,
   * secretAccessKey }` (credentials are encrypted at rest and never shown again), or `scripted`.
   */
  model: ModelConfig;
  /** The system prompt of every model call the session's turns make; absent: none. */
  system?: string;
  /**
   * Placed tools (`lookup()`, `lookup({ env, ...options })`) and the tools of MCP Environments
   * (`mcpTools(mcpEnv({ name, url }))`, placed by Brain from the server's `tools/list`); names
   * must be unique.
   */
  tools?: readonly (PlacedTool | McpTools)[];
  metadata?: Record<string, string>;
  /** Initial workspace files (path → UTF-8 text), granted to tools by their Environment. */
  workspace?: Record<string, string>;
  /**
   * What the session's tools may do through `ctx.environments` (operations, optionally limited to
   * some environment names). Absent: nothing.
   */
  environmentControl?: EnvironmentControl;
  /**
   * A caller-owned deadline for every tool call the session makes (epoch ms, compared with
   * `Date.now()`): each call ends `timeout` at the earliest of this, its turn's deadline and its
   * tool's `timeoutMs`. Absent, with tools declared without `timeoutMs`: unlimited.
   */
  deadline?: number;
  /** The same as a duration from when Brain creates the session; with `deadline`, the earlier wins. */
  timeoutMs?: number;
}

export interface GetSessionOptions {
  /**
   * Reattachment: exactly the session's original host tools, served again by this client under
   * the credentials it was constructed with. Omit to open a plain handle.
   */
  tools?: readonly PlacedTool[];
}

export interface ListSessionsOptions {
  limit?: number;
  cursor?: string;
}

export interface SessionPage {
  sessions: Session[];
  nextCursor: string | null;
}

/** `brain.sessions`. */
export class Sessions {
  readonly #deps: SessionDeps;

  constructor(deps: SessionDeps) {
    this.#deps = deps;
  }

  /**
   * Creates a session. When it has host tools, the first call registers this client's host and
   * connects it; the session's handlers are attached once Brain has created it.
   */
  async create(params: CreateSessionParams, options: RequestOptions = {}): Promise<Session> {
    const given = params.tools ?? [];
    const tools = given.filter((t): t is PlacedTool => !isMcpTools(t));
    checkTools(tools);
    const mcpServers = mcpServerSpecs(given.filter(isMcpTools), tools);
    const body: CreateSessionBody = { model: params.model, tools: await this.#placements(tools) };
    const environments = environmentSpecs(tools);
    if (environments.length > 0) body.environments = environments;
    if (mcpServers.length > 0) body.mcpServers = mcpServers;
    if (params.environmentControl !== undefined) body.environmentControl = params.environmentControl;
    if (params.system !== undefined) body.system = params.system;
    if (params.metadata !== undefined) body.metadata = params.metadata;
    if (params.workspace !== undefined) body.workspace = params.workspace;
    if (params.deadline !== undefined) body.deadline = params.deadline;
    if (params.timeoutMs !== undefined) body.timeoutMs = params.timeoutMs;
    // Checked before a host is registered for it; hostId is optional in the schema.
    const checked = CreateSessionBodySchema.safeParse(body);
    if (!checked.success) {
      throw new BrainError("invalid_request", "The session parameters are invalid.", checked.error.issues);
    }
    const named = [...new Set(tools.filter(servedByNamedHost).map((t) => t.env.name))];
    if (named.length > 0) body.namedHosts = named;
    if (tools.some(servedHere)) body.hostId = (await this.#deps.host.ensure()).hostId;
    const info = await this.#deps.http.request("POST", "/v1/sessions", {
      body,
      idempotencyKey: options.idempotencyKey,
      schema: SessionSchema,
    });
    if (body.hostId !== undefined) this.#deps.host.attach(info.id, tools.filter(servedHere));
    return new Session(info, this.#deps);
  }

  /** Opens a handle on an existing session; with `tools`, restores their handlers (see GetSessionOptions). */
  async get(id: string, options: GetSessionOptions = {}): Promise<Session> {
    const info = await this.#deps.http.request("GET", `/v1/sessions/${encodeURIComponent(id)}`, {
      schema: SessionSchema,
    });
    if (options.tools !== undefined) {
      const tools = options.tools;
      checkTools(tools);
      const advertised = await this.#deps.http.request("GET", `/v1/sessions/${encodeURIComponent(id)}/tools`, {
        schema: SessionToolsSchema,
      });
      // Components, HTTP Environments, tools served over HTTP and named hosts' tools run
      // elsewhere: only this client's own host tools are reattached.
      const named = new Set(advertised.namedHosts ?? []);
      const differences = placementDifferences(
        advertised.tools.filter((t) => t.env.type === "host" && !t.env.url && !named.has(t.env.name)),
        tools.filter(servedHere).map((t) => t.placement),
      );
      if (differences.length > 0) {
        throw new BrainError(
          "tool_mismatch",
          `Session ${id} cannot be reattached with these tools: ${differences.join("; ")}.`,
          differences,
        );
      }
      if (tools.length > 0) {
        if (this.#deps.host.hostId() !== info.hostId) {
          throw new BrainError(
            "host_required",
            "Reattaching tools needs the credentials of the host the session was placed on: new Brain({ credentials }).",
          );
        }
        // Attached before connecting: the welcome attaches every attached session at once.
        this.#deps.host.attach(info.id, tools.filter(servedHere));
        try {
          await this.#deps.host.ensure();
        } catch (err) {
          this.#deps.host.release(info.id);
          throw err;
        }
      }
    }
    return new Session(info, this.#deps);
  }

  /**
   * Forks session `id` at sequence `at`: a new session whose journal is the source's up to `at`
   * (what was open there is closed in the fork's journal), with the same tools and host, and
   * `model` instead of the source's when given. Its next turn runs on the forked conversation;
   * with `tools`, this client serves the fork's host tools at once (as `get(id, { tools })`).
   * The source is unchanged.
   */
  async fork(id: string, options: ForkOptions): Promise<Session> {
    const body = ForkSessionBodySchema.safeParse({ at: options.at, model: options.model, system: options.system });
    if (!body.success) throw new BrainError("invalid_request", "The fork is invalid.", body.error.issues);
    const info = await this.#deps.http.request("POST", `/v1/sessions/${encodeURIComponent(id)}/fork`, {
      body: body.data,
      schema: SessionSchema,
    });
    if (options.tools === undefined) return new Session(info, this.#deps);
    return this.get(info.id, { tools: options.tools });
  }

  /**
   * Replays a recorded session for a test: a fork at `at` whose model is the scripted provider
   * (`script` answers its Agentloop's calls from the fork on, `toolScript` its tools' `ctx.model`),
   * so a production session becomes a regression test that needs no provider.
   */
  replay(id: string, options: ReplayOptions): Promise<Session> {
    const { at, script, toolScript, tools } = options;
    const model = { provider: "scripted" as const, script, ...(toolScript ? { toolScript } : {}) };
    return this.fork(id, { at, model, ...(tools ? { tools } : {}) });
  }

  /** The wire placements; component tools' files are uploaded (once per server) on the way. */
  async #placements(tools: readonly PlacedTool[]) {
    return Promise.all(
      tools.map(async (placed) => {
        const c = componentOf(placed);
        if (!c) return placed.placement;
        const sha256 = await c.admit(this.#deps.http);
        return { ...placed.placement, implementation: { type: "component" as const, sha256 } };
      }),
    );
  }

  async list(options: ListSessionsOptions = {}): Promise<SessionPage> {
    const page = await this.#deps.http.request("GET", "/v1/sessions", {
      query: { limit: options.limit, cursor: options.cursor },
      schema: SessionListSchema,
    });
    return { sessions: page.sessions.map((info) => new Session(info, this.#deps)), nextCursor: page.nextCursor };
  }
}

/**
 * Whether this client's own host connection serves the tool: `lookup()` with no env (the
 * registering application). A host binding of another name is a named host (brain.hosts.serve).
 */
function servedHere(placed: PlacedTool): boolean {
  return placed.env.type === "host" && !placed.env.url && placed.env.name === APPLICATION_ENV.name;
}

/** Whether the tool is served by a named host: `hostEnv({ name })` without a url. */
function servedByNamedHost(placed: PlacedTool): boolean {
  return placed.env.type === "host" && !placed.env.url && placed.env.name !== APPLICATION_ENV.name;
}

/** The configurations of the HTTP Environments the tools are bound to; one per name. */
function environmentSpecs(tools: readonly PlacedTool[]): EnvironmentSpec[] {
  const specs = new Map<string, EnvironmentSpec>();
  const bindings = new Map<string, PlacedTool["env"]>();
  for (const placed of tools) {
    const bound = bindings.get(placed.env.name);
    if (bound && !isDeepStrictEqual(bound, placed.env)) {
      throw new BrainError(
        "duplicate_environment",
        `Two environments are named ${JSON.stringify(placed.env.name)} (${bound.type} and ${placed.env.type}).`,
      );
    }
    bindings.set(placed.env.name, placed.env);
    if (placed.env.type !== "http") continue;
    const spec = environmentSpecOf(placed.env);
    if (!spec) throw new BrainError("invalid_options", `${placed.name}: its env must come from httpEnv().`);
    const seen = specs.get(spec.name);
    if (seen && !isDeepStrictEqual(seen, spec)) {
      throw new BrainError(
        "duplicate_environment",
        `Two environments are named ${JSON.stringify(spec.name)} with different configurations.`,
      );
    }
    specs.set(spec.name, spec);
  }
  return [...specs.values()];
}

/** The MCP servers of the session: one `mcpTools` per MCP Environment, its name nobody else's. */
function mcpServerSpecs(sets: readonly McpTools[], tools: readonly PlacedTool[]): McpServerSpec[] {
  const out = new Map<string, McpServerSpec>();
  const taken = new Set(tools.map((t) => t.env.name));
  for (const set of sets) {
    const spec = mcpServerSpecOf(set);
    if (!spec) throw new BrainError("invalid_tool", "MCP tools come from mcpTools(mcpEnv(...)).");
    if (out.has(spec.name) || taken.has(spec.name)) {
      throw new BrainError(
        "duplicate_environment",
        `Environment ${JSON.stringify(spec.name)} is bound twice (one mcpTools per MCP Environment; list its tools in only).`,
      );
    }
    out.set(spec.name, spec);
  }
  return [...out.values()];
}

/** Every tool must come from a factory, and names are unique within a session. */
function checkTools(tools: readonly PlacedTool[]): void {
  const seen = new Set<string>();
  for (const placed of tools) {
    if (!isPlacedTool(placed)) {
      throw new BrainError("invalid_tool", "Sessions take placed tools: call the tool factory, e.g. lookup().");
    }
    if (seen.has(placed.name)) {
      throw new BrainError("duplicate_tool", `Two tools in this session are named ${JSON.stringify(placed.name)}.`);
    }
    seen.add(placed.name);
  }
}

import { isDeepStrictEqual } from "node:util";
import { BrainError, type EnvironmentSpec, type ToolPlacement } from "@aexhq/brain-contracts";
import { schemaSizeProblem, unsupportedPatterns } from "@aexhq/brain-core/schemas";
import type { Sql } from "@aexhq/brain-db/connect";
import { missingComponents } from "@aexhq/brain-db/ops";

/**
 * The rules a session's tool placements must satisfy before anything is stored: unique names;
 * one configuration per environment name; `run` tools (no implementation) in host environments,
 * components in Brain environments, descriptors in HTTP environments that the session configures;
 * every component uploaded; every grant in the allow-list; schemas bounded in size and depth, and
 * made of patterns RE2 can run wherever Brain alone checks a tool's values (checkSchemas).
 */
export async function checkPlacements(
  sql: Sql,
  tools: ToolPlacement[],
  environments: EnvironmentSpec[],
  allowedGrants: ReadonlySet<string>,
  /** Whether MCP placements may appear: only in the list the server made from mcpServers. */
  mcpPlaced = false,
): Promise<void> {
  const specs = new Map<string, EnvironmentSpec>();
  for (const e of environments) {
    if (specs.has(e.name)) {
      throw new BrainError("duplicate_environment", `Two environments are named ${JSON.stringify(e.name)}.`);
    }
    specs.set(e.name, e);
  }
  const names = new Set<string>();
  const envs = new Map<string, ToolPlacement["env"]>();
  const components = new Set<string>();
  for (const t of tools) {
    if (names.has(t.name)) throw new BrainError("duplicate_tool", `Two tools are named ${JSON.stringify(t.name)}.`);
    names.add(t.name);
    const seen = envs.get(t.env.name);
    if (seen && !isDeepStrictEqual(seen, t.env)) {
      throw new BrainError(
        "duplicate_environment",
        `Environment ${JSON.stringify(t.env.name)} is bound twice with different configurations.`,
      );
    }
    envs.set(t.env.name, t.env);
    checkSchemas(t);
    if (t.approval === "predicate" && (t.env.type !== "host" || t.env.url)) {
      throw new BrainError(
        "invalid_request",
        `${t.name}: an approval predicate is asked by the host that runs the tool; Brain runs this one itself (use "always").`,
      );
    }
    if (t.env.type !== "http" && specs.has(t.env.name)) {
      throw new BrainError(
        "duplicate_environment",
        `Environment ${JSON.stringify(t.env.name)} names both an HTTP Environment and a ${t.env.type} binding.`,
      );
    }
    checkEnvironment(t, specs, allowedGrants, mcpPlaced, components);
  }
  if (components.size > 0) {
    const missing = await missingComponents(sql, components);
    if (missing.length > 0) throw new BrainError("component_not_found", `Not uploaded: ${missing.join(", ")}.`);
  }
}

/** One placement against its environment's type; collects the components it runs. */
function checkEnvironment(
  t: ToolPlacement,
  specs: ReadonlyMap<string, EnvironmentSpec>,
  allowedGrants: ReadonlySet<string>,
  mcpPlaced: boolean,
  components: Set<string>,
): void {
  switch (t.env.type) {
    case "host":
      if (t.implementation) {
        throw new BrainError("invalid_placement", `${t.name}: a tool with an implementation cannot run in a host.`);
      }
      if (t.env.protocol && !t.env.url) {
        throw new BrainError("invalid_placement", `${t.name}: a host protocol needs the url that serves it.`);
      }
      break;
    case "brain": {
      if (t.implementation?.type !== "component") {
        throw new BrainError(
          "invalid_placement",
          t.implementation
            ? `${t.name}: a Brain environment runs components, not descriptors (unsupported runtime).`
            : `${t.name}: a run function belongs in a host environment.`,
        );
      }
      components.add(t.implementation.sha256);
      const workspace = t.env.filesystem?.workspace;
      if (workspace && !allowedGrants.has(`workspace:${workspace}`)) {
        throw new BrainError(
          "grant_denied",
          `${t.env.name}: the grant workspace:${workspace} is not allowed by this server (BRAIN_ALLOWED_GRANTS).`,
        );
      }
      break;
    }
    case "mcp":
      // Only the server places MCP tools (from the remote tools/list): a caller names the
      // server in mcpServers and never writes an MCP placement (or its schemas) itself.
      if (t.implementation?.type !== "mcp" || !mcpPlaced) {
        throw new BrainError(
          "invalid_placement",
          `${t.name}: MCP tools are placed by naming their server in mcpServers (mcpTools(mcpEnv(...))).`,
        );
      }
      break;
    case "http":
      if (t.implementation?.type !== "descriptor") {
        throw new BrainError(
          "invalid_placement",
          t.implementation
            ? `${t.name}: an HTTP Environment interprets descriptors, not components (unsupported runtime).`
            : `${t.name}: a run function belongs in a host environment.`,
        );
      }
      if (!specs.has(t.env.name)) {
        throw new BrainError(
          "invalid_placement",
          `${t.name}: HTTP Environment ${JSON.stringify(t.env.name)} is not configured in the session's environments.`,
        );
      }
      break;
  }
}

/**
 * A tenant's schemas are compiled and run on loops every tenant shares: each is bounded here, and
 * where Brain alone checks a tool's values (components, HTTP Environment descriptors, MCP tools,
 * the answers of v1 HTTP tools) every pattern must be one RE2 runs in linear time. A host tool's
 * SDK checks its own values with zod, in the application's process: its patterns are its own.
 */
function checkSchemas(t: ToolPlacement): void {
  for (const [which, schema] of [
    ["input", t.inputSchema],
    ["output", t.outputSchema],
  ] as const) {
    const size = schemaSizeProblem(schema);
    if (size) throw new BrainError("invalid_request", `${t.name}: its ${which} schema is refused: ${size}.`);
    const v1Answer =
      which === "output" && t.env.type === "host" && t.env.url !== undefined && t.env.protocol === "json";
    const checkedByBrain = t.env.type !== "host" || v1Answer;
    const [unsupported] = checkedByBrain ? unsupportedPatterns(schema) : [];
    if (unsupported) {
      throw new BrainError(
        "invalid_request",
        `${t.name}: its ${which} schema has a pattern Brain cannot check in linear time (at ${unsupported.path}): ${unsupported.reason}.`,
      );
    }
  }
}

/** Tools served over a host connection (a host binding without a url). */
export function isConnectionTool(t: ToolPlacement): boolean {
  return t.env.type === "host" && !t.env.url;
}

/** Tools served by the session's own host (`hostId`): connection tools outside named hosts. */
export function hasHostTools(tools: ToolPlacement[], named: ReadonlySet<string> = new Set()): boolean {
  return tools.some((t) => isConnectionTool(t) && !named.has(t.env.name));
}

/**
 * The session's tools by the named host serving them. Each name in `namedHosts` must be the
 * environment of some connection tool: a name placing nothing is a mistake worth reporting.
 */
export function namedHostTools(tools: ToolPlacement[], namedHosts: string[]): Map<string, ToolPlacement[]> {
  const byName = new Map<string, ToolPlacement[]>(namedHosts.map((n) => [n, []]));
  for (const t of tools) if (isConnectionTool(t)) byName.get(t.env.name)?.push(t);
  for (const [name, placed] of byName) {
    if (placed.length === 0) {
      throw new BrainError("invalid_request", `namedHosts: no tool is placed in host ${JSON.stringify(name)}.`);
    }
  }
  return byName;
}

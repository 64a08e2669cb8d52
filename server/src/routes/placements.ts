import { isDeepStrictEqual } from "node:util";
import { BrainError, type ToolPlacement } from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db";

/**
 * The rules a session's tool placements must satisfy before anything is stored: unique names;
 * one configuration per environment name; `run` tools (no implementation) in host environments
 * and implementations outside them; every component uploaded; every grant in the allow-list.
 */
export async function checkPlacements(
  sql: Sql,
  tools: ToolPlacement[],
  allowedGrants: ReadonlySet<string>,
): Promise<void> {
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
    if (t.env.type === "host" && t.implementation) {
      throw new BrainError("invalid_placement", `${t.name}: a tool with an implementation cannot run in a host.`);
    }
    if (t.env.type === "brain") {
      if (!t.implementation) {
        throw new BrainError("invalid_placement", `${t.name}: a run function belongs in a host environment.`);
      }
      components.add(t.implementation.sha256);
      const workspace = t.env.filesystem?.workspace;
      if (workspace && !allowedGrants.has(`workspace:${workspace}`)) {
        throw new BrainError(
          "grant_denied",
          `${t.env.name}: the grant workspace:${workspace} is not allowed by this server (BRAIN_ALLOWED_GRANTS).`,
        );
      }
    }
  }
  if (components.size > 0) {
    const found = await sql<{ sha256: string }[]>`
      SELECT sha256 FROM components WHERE sha256 = ANY(${sql.array([...components])}::text[])`;
    const have = new Set(found.map((r) => r.sha256));
    const missing = [...components].filter((c) => !have.has(c));
    if (missing.length > 0) throw new BrainError("component_not_found", `Not uploaded: ${missing.join(", ")}.`);
  }
}

export function hasHostTools(tools: ToolPlacement[]): boolean {
  return tools.some((t) => t.env.type === "host");
}

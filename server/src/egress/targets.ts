/**
 * Session creation knows most of the addresses its calls will reach: the model's base URL, its
 * HTTP Environments' and MCP servers' URLs, its HTTP tools' URLs. Each is judged by the egress
 * guard before anything is stored or sent, so a refused target is `egress_denied` at creation
 * rather than on every call (which the guard judges again anyway).
 */
import { BrainError, type CreateSessionBody, type ToolPlacement } from "@aexhq/brain-contracts";
import type { Egress, EgressDenied } from "@aexhq/brain-core/egress";

type Targets = Pick<CreateSessionBody, "model" | "environments" | "mcpServers"> & { tools?: readonly ToolPlacement[] };

/** Every URL a session's calls would send requests to, named for the refusal. */
export function sessionTargets(body: Targets): { what: string; url: string }[] {
  const out: { what: string; url: string }[] = [];
  if (body.model.provider !== "scripted" && body.model.baseUrl)
    out.push({ what: "model baseUrl", url: body.model.baseUrl });
  for (const env of body.environments ?? [])
    out.push({ what: `environment ${JSON.stringify(env.name)}`, url: env.baseUrl });
  for (const mcp of body.mcpServers ?? []) out.push({ what: `MCP server ${JSON.stringify(mcp.name)}`, url: mcp.url });
  for (const tool of body.tools ?? []) {
    if (tool.env.type === "host" && tool.env.url)
      out.push({ what: `tool ${JSON.stringify(tool.name)}`, url: tool.env.url });
  }
  return out;
}

/** Throws `egress_denied` for the first target the guard refuses; resolves when all pass. */
export async function checkTargets(egress: Pick<Egress, "preflight">, targets: { what: string; url: string }[]) {
  const verdicts = await Promise.all(targets.map(async (t) => ({ ...t, refusal: await egress.preflight(t.url) })));
  const refused = verdicts.find((v) => v.refusal !== null);
  if (refused) throw denied(refused.what, refused.refusal!);
}

export function denied(what: string, refusal: EgressDenied): BrainError {
  return new BrainError("egress_denied", `${what}: ${refusal.message}`.slice(0, 2048), refusal.details);
}

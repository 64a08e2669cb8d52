import {
  type CreateSessionBody,
  type ModelConfig,
  ModelConfigSchema,
  type RealModelConfig,
} from "@aexhq/brain-contracts";
import type { Sql } from "@aexhq/brain-db/connect";
import { environmentSecret, MODEL_SECRET, mcpSecret, readModel, readSecret, secretAad } from "@aexhq/brain-db/ops";
import type { Sealed, SecretBox } from "@aexhq/brain-db/secrets";
import { z } from "zod";
import { publicModelConfig } from "./provider.js";

/**
 * What session creation stores of its secrets: the provider key and each HTTP Environment's
 * headers, sealed under the server key. The public configuration (sessions.model, environments)
 * keeps only what can be shown: no key, header names without values.
 */
export function sealSessionSecrets(
  box: SecretBox,
  sessionId: string,
  body: Pick<CreateSessionBody, "model" | "environments" | "mcpServers">,
): { name: string; sealed: Sealed }[] {
  const out: { name: string; sealed: Sealed }[] = [];
  if (body.model.provider !== "scripted") {
    out.push({ name: MODEL_SECRET, sealed: box.seal(modelSecret(body.model), secretAad(sessionId, MODEL_SECRET)) });
  }
  for (const env of body.environments ?? []) {
    if (!env.headers || Object.keys(env.headers).length === 0) continue;
    const name = environmentSecret(env.name);
    out.push({ name, sealed: box.seal(JSON.stringify(env.headers), secretAad(sessionId, name)) });
  }
  for (const mcp of body.mcpServers ?? []) {
    if (!mcp.headers || Object.keys(mcp.headers).length === 0) continue;
    const name = mcpSecret(mcp.name);
    out.push({ name, sealed: box.seal(JSON.stringify(mcp.headers), secretAad(sessionId, name)) });
  }
  return out;
}

/**
 * The session's model configuration with its key decrypted, for building its provider. `stored`
 * is sessions.model when the caller has the row; the key is read only for providers that have one.
 */
export async function sessionModelConfig(
  sql: Sql,
  box: SecretBox,
  sessionId: string,
  stored: unknown,
): Promise<ModelConfig> {
  if ((stored as { provider?: string }).provider === "scripted") return ModelConfigSchema.parse(stored);
  return openModelConfig(box, sessionId, stored, await readSecret(sql, sessionId, MODEL_SECRET));
}

/** The same in one read, for callers without the session row (tools' model calls); null: no session. */
export async function loadModelConfig(sql: Sql, box: SecretBox, sessionId: string): Promise<ModelConfig | null> {
  const found = await readModel(sql, sessionId);
  return found && openModelConfig(box, sessionId, found.model, found.sealed);
}

function openModelConfig(box: SecretBox, sessionId: string, stored: unknown, sealed: Sealed | null): ModelConfig {
  const config = stored as Record<string, unknown> & { provider: string };
  if (config.provider === "scripted") return ModelConfigSchema.parse(config);
  if (!sealed) throw new Error(`session ${sessionId} has no stored model credentials`);
  const secret = box.open(sealed, secretAad(sessionId, MODEL_SECRET));
  if (config.provider === "bedrock")
    return ModelConfigSchema.parse({ ...config, ...BedrockSecretSchema.parse(JSON.parse(secret)) });
  return ModelConfigSchema.parse({ ...config, apiKey: secret });
}

/** Bedrock's credentials, sealed together as one JSON document. */
const BedrockSecretSchema = z.strictObject({
  apiKey: z.string().optional(),
  accessKeyId: z.string().optional(),
  secretAccessKey: z.string().optional(),
  sessionToken: z.string().optional(),
});

/**
 * What is sealed of a configuration's credentials: the API key as it is (as every session
 * before Bedrock has it), or Bedrock's key pair (or key) as one JSON document.
 */
function modelSecret(model: RealModelConfig): string {
  if (model.provider !== "bedrock") return model.apiKey;
  const { apiKey, accessKeyId, secretAccessKey, sessionToken } = model;
  return JSON.stringify({ apiKey, accessKeyId, secretAccessKey, sessionToken });
}

/** What sessions.model keeps: the scripted provider's script, other providers without their key. */
export function storedModelConfig(config: ModelConfig): unknown {
  return config.provider === "scripted" ? config : publicModelConfig(config);
}

export { publicModelConfig };

import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { resolveSecretKeys } from "@aexhq/brain-db/connect";
import { resealSecrets, secretsByKey } from "@aexhq/brain-db/ops";
import { SecretBox } from "@aexhq/brain-db/secrets";
import type { CliEnv } from "../config.js";
import { withDatabase } from "../database.js";
import { CliError, UsageError } from "../errors.js";
import { out, printJson } from "../output.js";

/**
 * `brain keys`: the BRAIN_SECRET_KEY ring. `generate` prints a new key; `rotate` re-seals every
 * session secret under the ring's first key (run it after putting a new key first on every server
 * and worker, then drop the old keys); `status` counts the secrets each key seals.
 */
export async function keysCommand(args: string[], env: CliEnv): Promise<number> {
  const [sub, ...rest] = args;
  const { values } = parseArgs({ args: rest, options: { json: { type: "boolean" } }, strict: true });
  if (sub === "generate") {
    out(randomBytes(32).toString("hex"));
    return 0;
  }
  if (sub !== "rotate" && sub !== "status") throw new UsageError("keys takes generate, rotate or status");
  let box: SecretBox;
  try {
    box = new SecretBox(resolveSecretKeys({ ...process.env, BRAIN_DATA_DIR: env.dataDir }));
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  return withDatabase(env, async (sql) => {
    if (sub === "status") {
      const counts = await secretsByKey(sql);
      const keys = Object.entries(counts).map(([keyId, secrets]) => ({
        keyId,
        secrets,
        inRing: box.keyIds.includes(keyId),
        primary: keyId === box.keyId,
      }));
      if (values.json) printJson({ ring: box.keyIds, keys });
      else
        for (const k of keys)
          out(
            `${k.keyId}  ${k.secrets} secrets  ${k.primary ? "primary" : k.inRing ? "in the ring" : "NOT in the ring"}`,
          );
      return keys.every((k) => k.inRing) ? 0 : 1;
    }
    const result = await resealSecrets(sql, box);
    if (values.json) printJson({ primary: box.keyId, ...result });
    else {
      out(`re-sealed ${result.resealed} secrets under ${box.keyId}`);
      for (const [keyId, n] of Object.entries(result.unreadable))
        out(`${n} secrets sealed under ${keyId}, which is not in BRAIN_SECRET_KEY: left as they are`);
    }
    return Object.keys(result.unreadable).length === 0 ? 0 : 1;
  });
}

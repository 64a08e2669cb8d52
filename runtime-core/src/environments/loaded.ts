/**
 * An Environment as its driver uses it: the stored row with its headers decrypted. Decrypted
 * headers live only in memory, for the requests of one invocation or setup.
 */
import { type EnvironmentRow, environmentSecret, type StoredEnvironment, secretAad } from "@aexhq/brain-db/ops";
import type { SecretBox } from "@aexhq/brain-db/secrets";
import { z } from "zod";
import { secretsOf } from "./redact.js";

export interface LoadedEnvironment {
  row: EnvironmentRow;
  headers: Record<string, string>;
  /** What to scrub from anything the Environment answers. */
  secrets: string[];
}

const HeadersSchema = z.record(z.string(), z.string());

/** Opens the sealed headers (bound to this session and Environment name by the AAD). */
export function openEnvironment(box: SecretBox, sessionId: string, stored: StoredEnvironment): LoadedEnvironment {
  let headers: Record<string, string> = {};
  if (stored.headers) {
    const secret = environmentSecret(stored.row.name);
    headers = HeadersSchema.parse(JSON.parse(box.open(stored.headers, secretAad(sessionId, secret))));
  }
  return { row: stored.row, headers, secrets: secretsOf(headers) };
}

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The operator token when BRAIN_API_TOKEN is unset (development): generated once, saved with mode
 * 0600 under the data directory, and reused on later starts.
 */
export function devOperatorToken(dataDir: string): { token: string; path: string; created: boolean } {
  const path = join(dataDir, "operator-token");
  if (existsSync(path)) {
    const token = readFileSync(path, "utf8").trim();
    if (token.length >= 16) return { token, path, created: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const token = `bop_${randomBytes(32).toString("base64url")}`;
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  return { token, path, created: true };
}

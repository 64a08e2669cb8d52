import { readFileSync } from "node:fs";
import { join } from "node:path";
import { brainSchemaProblem } from "@aexhq/brain-db/connect";
import { CliError } from "./errors.js";

/** What the CLI reads from the environment: the server's own variables, plus BRAIN_URL/BRAIN_TOKEN. */
export interface CliEnv {
  /** DATABASE_URL; unset: the embedded Postgres under BRAIN_DATA_DIR/pg. */
  databaseUrl: string | undefined;
  /** BRAIN_DATABASE_PASSWORD_FILE. */
  databasePasswordFile: string | undefined;
  /** BRAIN_DIRECT_URL: a direct connection beside a pooled DATABASE_URL. */
  directUrl: string | undefined;
  /** BRAIN_READ_URL: a replica for the listings (`calls ls`), and `doctor`'s lag check. */
  readUrl: string | undefined;
  schema: string;
  dataDir: string;
  /** The HTTP API, for commands that go through a server. */
  url: string;
  /** Bearer token: BRAIN_TOKEN, else BRAIN_API_TOKEN, else the dev operator token `npm start` saved. */
  token: string | undefined;
  /** BRAIN_RETENTION_DAYS (the default age of `prune`). */
  retentionDays: number;
}

export function cliEnv(env: Record<string, string | undefined>): CliEnv {
  const schema = env.BRAIN_SCHEMA || "brain";
  const problem = brainSchemaProblem(schema);
  if (problem) throw new CliError(`invalid configuration: BRAIN_SCHEMA: ${problem}`);
  const dataDir = env.BRAIN_DATA_DIR || ".brain";
  const retentionDays = Number(env.BRAIN_RETENTION_DAYS ?? "30");
  if (!Number.isFinite(retentionDays) || retentionDays < 0) {
    throw new CliError("invalid configuration: BRAIN_RETENTION_DAYS: a number of days, 0 to keep everything");
  }
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    databasePasswordFile: env.BRAIN_DATABASE_PASSWORD_FILE || undefined,
    directUrl: (env.DATABASE_URL && env.BRAIN_DIRECT_URL) || undefined,
    readUrl: (env.DATABASE_URL && env.BRAIN_READ_URL) || undefined,
    schema,
    dataDir,
    url: (env.BRAIN_URL || `http://127.0.0.1:${env.BRAIN_PORT || "3210"}`).replace(/\/+$/, ""),
    token: env.BRAIN_TOKEN || env.BRAIN_API_TOKEN || savedToken(dataDir),
    retentionDays,
  };
}

function savedToken(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, "operator-token"), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

import type { CliEnv } from "./config.js";
import { CliError } from "./errors.js";

/** One request to the HTTP API with the operator's (or an application's) bearer token. */
export async function api<T>(env: CliEnv, method: string, path: string, body?: unknown): Promise<T> {
  const res = await request(env, method, path, body);
  return (await res.json()) as T;
}

/** The raw response (streams), after the same error handling. */
export async function request(env: CliEnv, method: string, path: string, body?: unknown): Promise<Response> {
  if (!env.token) throw new CliError("no token: set BRAIN_TOKEN (the operator token `brain start` prints)");
  let res: Response;
  try {
    res = await fetch(`${env.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${env.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? String(error);
    throw new CliError(`cannot reach Brain at ${env.url} (BRAIN_URL): ${cause}`);
  }
  if (!res.ok) {
    const text = await res.text();
    let message = text;
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } };
      if (parsed.error) message = `${parsed.error.code}: ${parsed.error.message}`;
    } catch {}
    throw new CliError(`${method} ${path}: ${res.status} ${message}`);
  }
  return res;
}

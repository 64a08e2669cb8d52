import {
  type AppToken,
  AppTokenListSchema,
  AppTokenSchema,
  type CreatedToken,
  CreatedTokenSchema,
  type TokenQuotas,
} from "./contracts.js";
import type { HttpClient } from "./http-client.js";

/**
 * Application tokens, for a Brain made with the operator token (an application token gets
 * `forbidden`). Each application then uses `new Brain({ url, token })` with its own token.
 */
export class Tokens {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * A new token: `token` is shown only here (Brain keeps its SHA-256). `quotas`: the most active
   * sessions, hosts, open calls and component bytes it may have (absent: the server's defaults).
   */
  create(name: string, options: { quotas?: TokenQuotas } = {}): Promise<CreatedToken> {
    const body = options.quotas ? { name, quotas: options.quotas } : { name };
    return this.#http.request("POST", "/v1/tokens", { body, schema: CreatedTokenSchema });
  }

  /** Changes a token's quotas (null: back to the server's default; absent: unchanged). */
  setQuotas(id: string, quotas: TokenQuotas): Promise<AppToken> {
    return this.#http.request("PATCH", `/v1/tokens/${encodeURIComponent(id)}`, {
      body: { quotas },
      schema: AppTokenSchema,
    });
  }

  /** Every token, revoked ones included, newest first; never the tokens themselves. */
  async list(): Promise<AppToken[]> {
    return (await this.#http.request("GET", "/v1/tokens", { schema: AppTokenListSchema })).tokens;
  }

  /** Revokes a token: its next request, on any server, is `unauthorized`. Idempotent. */
  revoke(id: string): Promise<AppToken> {
    return this.#http.request("DELETE", `/v1/tokens/${encodeURIComponent(id)}`, { schema: AppTokenSchema });
  }
}

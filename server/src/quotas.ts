/**
 * Quotas per application token: what the operator set on the token (PATCH /v1/tokens/:id), else
 * the server's default (BRAIN_QUOTA_*), else none. The operator's own work has none. Creations
 * are checked in their own transaction with the token's row locked (db/src/ops/quotas.ts), so a
 * token never overshoots; open calls are counted when a model's calls are planned, which
 * concurrent sessions of one token may overshoot by the calls they plan at the same moment. A
 * token's own quotas are read at most every CACHE_MS per server (a model step with tool calls
 * would otherwise read them every time): a change applies within that.
 */
import type { Sql } from "@aexhq/brain-db/connect";
import { type QuotaName, readTokenQuotas, type TokenQuotas, tokenUsage } from "@aexhq/brain-db/ops";

export type QuotaDefaults = TokenQuotas;

const CACHE_MS = 5000;
const CACHE_ENTRIES = 10_000;

export class Quotas {
  private readonly cache = new Map<string, { quotas: TokenQuotas | null; at: number }>();

  constructor(
    private readonly sql: Sql,
    readonly defaults: QuotaDefaults,
  ) {}

  /**
   * For a creation by `tokenId` (null: the operator): undefined when no quota applies, else what
   * the creation's transaction checks against (the default, when the token has none of its own).
   */
  async guard(tokenId: string | null, quota: QuotaName): Promise<{ fallback: number | null } | undefined> {
    if (tokenId === null) return undefined;
    const stored = await this.stored(tokenId);
    const limit = stored?.[quota] ?? this.defaults[quota];
    return limit === null ? undefined : { fallback: this.defaults[quota] };
  }

  /** How many of `wanted` new calls the token's open-calls quota leaves room for. */
  async openCallRoom(tokenId: string | null, wanted: number): Promise<number> {
    if (tokenId === null || wanted === 0) return wanted;
    const stored = await this.stored(tokenId);
    const limit = stored?.openCalls ?? this.defaults.openCalls;
    if (limit === null) return wanted;
    const used = await tokenUsage(this.sql, tokenId, "openCalls", limit + 1);
    return Math.max(0, Math.min(wanted, limit - used));
  }

  /** Its quotas changed (on this server): read them again next time. */
  forget(tokenId: string): void {
    this.cache.delete(tokenId);
  }

  /** The token's own quotas, read again once CACHE_MS old. */
  private async stored(tokenId: string): Promise<TokenQuotas | null> {
    const hit = this.cache.get(tokenId);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.quotas;
    const quotas = await readTokenQuotas(this.sql, tokenId);
    if (this.cache.size >= CACHE_ENTRIES) this.cache.clear();
    this.cache.set(tokenId, { quotas, at: Date.now() });
    return quotas;
  }
}

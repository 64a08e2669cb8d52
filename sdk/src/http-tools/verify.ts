import type { IncomingMessage } from "node:http";
import {
  BrainError,
  type BrainKey,
  type BrainKeys,
  BrainKeysSchema,
  INVOCATION_SIGNATURE_HEADER,
  verifyInvocation,
} from "../contracts.js";

export interface VerifyOptions {
  /** Brain's base URL, whose GET /v1/keys verify invocations; default `process.env.BRAIN_URL`. */
  brainUrl?: string;
  /** Or Brain's keys themselves (what GET /v1/keys answers): nothing is fetched. */
  keys?: BrainKeys;
  /**
   * The URL (or URLs) Brain is told to POST to, as placed (`hostEnv({ url })`); default: the
   * request's own host and path, which a proxy that rewrites them would change.
   */
  audience?: string | readonly string[];
  /** false: accept invocations without checking Brain's signature (a trusted network only). */
  verify?: boolean;
}

/** A known key is not asked for again sooner than this. */
const REFETCH_MS = 30_000;
const FETCH_TIMEOUT_MS = 10_000;

/**
 * Checks that an invocation comes from Brain: signed by one of Brain's keys, unexpired, for this
 * handler. Refusals are `unauthorized`; a handler that cannot know Brain's keys is refused at once.
 */
export class InvocationVerifier {
  private keys: readonly BrainKey[];
  private fetchedAt = 0;
  private fetching: Promise<void> | null = null;
  private readonly keysUrl: string | null;
  private readonly audiences: readonly string[] | null;
  readonly enabled: boolean;

  constructor(options: VerifyOptions) {
    this.enabled = options.verify !== false;
    this.keys = options.keys ? BrainKeysSchema.parse(options.keys).keys : [];
    const brainUrl = options.brainUrl ?? process.env.BRAIN_URL;
    this.keysUrl = options.keys || !brainUrl ? null : `${brainUrl.replace(/\/+$/, "")}/v1/keys`;
    this.audiences = options.audience === undefined ? null : [options.audience].flat();
    if (this.enabled && !options.keys && !this.keysUrl) {
      throw new BrainError(
        "invalid_tool",
        "toolHandler checks that each invocation comes from Brain: pass { brainUrl } (or set BRAIN_URL), or { keys }; { verify: false } only on a trusted network.",
      );
    }
  }

  /** Resolves when `body` is Brain's signed invocation for this request; throws `unauthorized`. */
  async check(req: IncomingMessage, body: string): Promise<void> {
    if (!this.enabled) return;
    const header = req.headers[INVOCATION_SIGNATURE_HEADER];
    const signature = typeof header === "string" ? header : undefined;
    const kid = /kid=([^;\s]+)/.exec(signature ?? "")?.[1];
    if (kid && !this.keys.some((k) => k.kid === kid)) await this.refresh();
    const verdict = verifyInvocation(this.keys, signature, body, (audience) => this.forThisHandler(audience, req));
    if (!verdict.ok) throw new BrainError("unauthorized", `Refused: ${verdict.reason}.`);
  }

  private forThisHandler(audience: string, req: IncomingMessage): boolean {
    if (this.audiences) return this.audiences.includes(audience);
    if (!URL.canParse(audience)) return false;
    const url = new URL(audience);
    return url.host === req.headers.host && `${url.pathname}${url.search}` === req.url;
  }

  private async refresh(): Promise<void> {
    if (!this.keysUrl || Date.now() - this.fetchedAt < REFETCH_MS) return;
    this.fetching ??= fetchKeys(this.keysUrl).then(
      (keys) => {
        this.keys = keys;
        this.fetchedAt = Date.now();
        this.fetching = null;
      },
      () => {
        // Unreachable for now: the invocation is refused, and the next one asks again.
        this.fetching = null;
      },
    );
    await this.fetching;
  }
}

async function fetchKeys(url: string): Promise<readonly BrainKey[]> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  if (!response.ok) throw new Error(`GET ${url}: HTTP ${response.status}`);
  return BrainKeysSchema.parse(await response.json()).keys;
}

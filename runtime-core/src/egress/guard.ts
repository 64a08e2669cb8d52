/**
 * The egress guard: every request Brain sends to an address a tenant chose (HTTP Environments and
 * their setup, ctx.environments.call, MCP servers, model providers, HTTP tools) goes through one
 * undici dispatcher whose connector resolves the name once, judges every address it resolved to,
 * and connects to the address it judged: no second lookup a resolver could answer differently.
 * Public addresses pass; loopback, private, link-local, unique-local, carrier-grade NAT, cloud
 * metadata and the other internal ranges pass only where BRAIN_EGRESS_ALLOW opens them. Every
 * connection is judged, so a redirect that leads elsewhere is judged again. With a proxy
 * (BRAIN_EGRESS_PROXY) the proxy connects; each target is judged by its resolution before the
 * request is handed over.
 */
import { lookup } from "node:dns/promises";
import { FORBIDDEN_REQUEST_HEADERS } from "@aexhq/brain-contracts";
import { Agent, buildConnector, type Dispatcher, ProxyAgent, fetch as undiciFetch } from "undici";
import { EgressDenied } from "./denied.js";
import { exchangeVia, type HttpAnswer, type HttpExchange } from "./exchange.js";
import { addressKind, type Ip, parseAddress } from "./ranges.js";
import { addressAllowed, type EgressRule, nameAllowed } from "./rules.js";

/** Every address a name resolves to, in the resolver's order. */
export type Resolve = (hostname: string) => Promise<string[]>;

export interface EgressOptions {
  /** What the operator opened beyond the public internet (parseEgressAllow). */
  allow: readonly EgressRule[];
  /** An HTTP(S) proxy every request goes through; its own address is not judged. */
  proxy?: string | undefined;
  /** Name resolution (default: the system resolver); tests give their own. */
  resolve?: Resolve;
  /** Opens the sockets of judged connections (default: undici's); tests watch it. */
  connect?: buildConnector.connector;
}

const systemResolve: Resolve = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/** How long a session creation's check waits for a name to resolve before leaving it to the call. */
const PREFLIGHT_RESOLVE_MS = 3000;

interface Target {
  hostname: string;
  port: number;
}

export class Egress {
  readonly #allow: readonly EgressRule[];
  readonly #resolve: Resolve;
  readonly #proxied: boolean;
  /** The dispatcher every guarded request uses. */
  readonly dispatcher: Dispatcher;

  constructor(options: EgressOptions) {
    this.#allow = options.allow;
    this.#resolve = options.resolve ?? systemResolve;
    this.#proxied = options.proxy !== undefined;
    // No header or body timeout: every request is bounded by its caller's signal.
    const timeouts = { headersTimeout: 0, bodyTimeout: 0 };
    this.dispatcher = options.proxy
      ? new ProxyAgent({ uri: options.proxy, ...timeouts })
      : new Agent({ ...timeouts, connect: this.#connector(options.connect ?? buildConnector({})) });
  }

  /** One bounded request (see exchange.ts), judged before anything is sent. */
  async exchange(url: URL, exchange: HttpExchange): Promise<HttpAnswer> {
    this.checkRequest(url, Object.keys(exchange.headers));
    if (this.#proxied) await this.#addressFor(targetOf(url));
    return exchangeVia(this.dispatcher, url, exchange);
  }

  /** fetch through the guard, for clients that take one (model providers, the MCP SDK). */
  readonly fetch: typeof globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    this.checkRequest(url, headerNames(init?.headers));
    if (this.#proxied) {
      await this.#addressFor(targetOf(url));
      // A redirect the proxy would follow to an unjudged target is not followed.
      if ((init?.redirect ?? "follow") === "follow") init = { ...init, redirect: "manual" };
    }
    const answer = await undiciFetch(url, { ...(init as object), dispatcher: this.dispatcher } as never);
    return answer as unknown as Response;
  };

  /** Refuses what no request may be: another scheme, credentials in the URL, a Host or hop-by-hop header. */
  checkRequest(url: URL, headers: readonly string[] = []): void {
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new EgressDenied(`${url.protocol} URLs are not reached; only http and https`);
    }
    if (url.username !== "" || url.password !== "") {
      throw new EgressDenied("a URL carrying credentials is not reached; send them in a header");
    }
    const forbidden = headers.find((name) => FORBIDDEN_REQUEST_HEADERS.has(name.toLowerCase()));
    if (forbidden) throw new EgressDenied(`the header ${JSON.stringify(forbidden)} is set by Brain, not by a caller`);
  }

  /**
   * At session creation, where the target is known: the refusal a call to `text` would meet, or
   * null. A name that does not resolve yet is left to the call, which is judged again anyway.
   */
  async preflight(text: string): Promise<EgressDenied | null> {
    try {
      const url = new URL(text);
      this.checkRequest(url);
      const target = targetOf(url);
      const literal = parseAddress(target.hostname);
      if (literal) return this.#refusal(target, literal);
      if (nameAllowed(this.#allow, target.hostname, target.port)) return null;
      const resolved = await withTimeout(this.#resolve(target.hostname), PREFLIGHT_RESOLVE_MS).catch(() => null);
      if (resolved !== null) this.#judgeAll(target, resolved);
      return null;
    } catch (error) {
      if (error instanceof EgressDenied) return error;
      throw error;
    }
  }

  /** Closes the dispatcher's connections. */
  async close(): Promise<void> {
    await this.dispatcher.close().catch(() => {});
  }

  /** undici's connector, given the judged address in place of the name (and the name for TLS). */
  #connector(base: buildConnector.connector): buildConnector.connector {
    return (options, callback) => {
      const hostname = bare(options.hostname).toLowerCase();
      const port = Number(options.port) || (options.protocol === "https:" ? 443 : 80);
      this.#addressFor({ hostname, port }).then(
        (address) => {
          // TLS checks the certificate against the name asked for, never the address connected to.
          const servername = options.servername || (parseAddress(hostname) ? undefined : hostname);
          base({ ...options, hostname: address, ...(servername ? { servername } : {}) }, callback);
        },
        (error: Error) => callback(error, null),
      );
    };
  }

  /** The address to connect to: the literal itself, or the first of a name's judged addresses. */
  async #addressFor(target: Target): Promise<string> {
    const literal = parseAddress(target.hostname);
    if (literal) {
      const refusal = this.#refusal(target, literal);
      if (refusal) throw refusal;
      return literal.toString();
    }
    return this.#judgeAll(target, await this.#resolve(target.hostname));
  }

  /** Every address must pass: a name that also answers an internal address is refused whole. */
  #judgeAll(target: Target, addresses: string[]): string {
    if (addresses.length === 0) throw new EgressDenied(`${target.hostname} resolves to no address`);
    for (const text of addresses) {
      const address = parseAddress(text);
      if (!address) throw new EgressDenied(`${target.hostname} resolves to something that is not an IP address`);
      const refusal = this.#refusal(target, address);
      if (refusal) throw refusal;
    }
    return addresses[0]!;
  }

  #refusal(target: Target, address: Ip): EgressDenied | null {
    const kind = addressKind(address);
    if (kind === "public" || addressAllowed(this.#allow, address, target.port)) return null;
    if (nameAllowed(this.#allow, target.hostname, target.port)) return null;
    const { hostname, port } = target;
    const what = parseAddress(hostname)
      ? `${hostname} is a ${kind} address`
      : `${hostname} resolves to a ${kind} address`;
    return new EgressDenied(`${what} (port ${port}), which this server does not reach; BRAIN_EGRESS_ALLOW opens it`, {
      host: hostname,
      port,
      range: kind,
    });
  }
}

function targetOf(url: URL): Target {
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { hostname: bare(url.hostname).toLowerCase(), port };
}

function bare(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

function headerNames(headers: RequestInit["headers"]): string[] {
  if (headers === undefined) return [];
  if (headers instanceof Headers) return [...headers.keys()];
  if (Array.isArray(headers)) return headers.map(([name]) => String(name));
  return Object.keys(headers);
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timed out")), ms);
    timer.unref();
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

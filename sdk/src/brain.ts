import { z } from "zod";
import { BrainError } from "./contracts.js";
import { HostConnection } from "./host-connection.js";
import { type BrainCredentials, OwnHost } from "./host-identity.js";
import { Hosts } from "./hosts.js";
import { HttpClient } from "./http-client.js";
import { Sessions } from "./sessions.js";
import { Tokens } from "./tokens.js";

export interface BrainOptions {
  /** The server's base URL (http or https); defaults to `process.env.BRAIN_URL`. */
  url?: string;
  /** An application token (`brain_app_…`) or the operator token; defaults to `process.env.BRAIN_TOKEN`. */
  token?: string;
  /** A host registered earlier (`brain.credentials()`), to reattach its sessions' tools. */
  credentials?: BrainCredentials;
  /**
   * The fetch for Brain's HTTP API, e.g. undici's with a dispatcher of its own (proxy, TLS,
   * timeouts). Default: node:http(s) on keep-alive connections, which costs a fraction of fetch's
   * CPU per request. No request depends on its timeouts: `send` resumes its wait when a request
   * is cut.
   */
  fetch?: typeof fetch;
}

const CredentialsSchema = z.strictObject({ hostId: z.uuid(), hostToken: z.string().min(1) });

/**
 * A client of one Brain server. Its sessions' application tools are served over one host
 * connection, opened lazily and kept until `await brain.close()`; each named host it serves
 * (`brain.hosts.serve`) has a connection of its own.
 */
export class Brain {
  readonly sessions: Sessions;
  /** Application tokens: administration needs the operator token. */
  readonly tokens: Tokens;
  /** Named hosts this process serves: `brain.hosts.serve({ name, tools })`. */
  readonly hosts: Hosts;
  readonly #own: OwnHost;
  readonly #host: HostConnection;

  constructor(options: BrainOptions = {}) {
    const url = options.url ?? process.env.BRAIN_URL;
    const token = options.token ?? process.env.BRAIN_TOKEN;
    if (url === undefined || url === "") {
      throw new BrainError("not_connected", "No Brain server URL: pass new Brain({ url }) or set BRAIN_URL.");
    }
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
      throw new BrainError("not_connected", `The Brain server URL must be http(s): ${url}`);
    }
    if (token === undefined || token === "") {
      throw new BrainError("unauthorized", "No Brain token: pass new Brain({ token }) or set BRAIN_TOKEN.");
    }
    let credentials: BrainCredentials | undefined;
    if (options.credentials !== undefined) {
      const parsed = CredentialsSchema.safeParse(options.credentials);
      if (!parsed.success) {
        throw new BrainError("unauthorized", "credentials must be { hostId, hostToken } from brain.credentials().");
      }
      credentials = parsed.data;
    }
    const http = new HttpClient(url, token, options.fetch);
    this.#own = new OwnHost(http, credentials);
    this.#host = new HostConnection(http, this.#own);
    this.sessions = new Sessions({ http, host: this.#host });
    this.tokens = new Tokens(http);
    this.hosts = new Hosts(http);
  }

  /**
   * The host identity to save for reattachment after a restart: JSON-serialisable. Undefined until
   * a host exists, i.e. until the first session with tools is created (or credentials were given).
   */
  credentials(): BrainCredentials | undefined {
    const credentials = this.#own.getCredentials();
    return credentials === undefined ? undefined : { ...credentials };
  }

  /**
   * Closes the host connection and every named host served, and stops reconnecting; in-flight
   * handlers are aborted and every session's handlers released. Idempotent. HTTP calls (send,
   * events, end, …) still work.
   */
  async close(): Promise<void> {
    await Promise.all([this.#host.close(), this.hosts.closeAll()]);
  }
}

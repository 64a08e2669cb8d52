import { RegisteredHostSchema } from "./contracts.js";
import type { HttpClient } from "./http-client.js";

/** The identity of a registered host: save it to reattach sessions after a restart. */
export interface BrainCredentials {
  hostId: string;
  hostToken: string;
}

/** Where a host connection goes and how it authenticates. */
export interface HostEndpoint {
  hostId: string;
  token: string;
  /** The socket's path on the server, with its query. */
  path: string;
}

/**
 * Who the connection is: the client's own host (registered lazily, or from saved credentials), or
 * a replica of a named host (see hosts.ts). `register` runs until it first succeeds.
 */
export interface HostIdentity {
  current(): HostEndpoint | undefined;
  register(): Promise<HostEndpoint>;
  /**
   * Whether the connection names the sessions it serves (attach frames): the client's own host
   * does, so Brain never sends it a call of a session it has not (re)attached. A replica serves
   * every session of its named host and names none.
   */
  readonly namesSessions: boolean;
}

/** The client's own host: `POST /v1/hosts` once, or the credentials it was given. */
export class OwnHost implements HostIdentity {
  readonly namesSessions = true;
  private credentials: BrainCredentials | undefined;

  constructor(
    private readonly http: HttpClient,
    credentials: BrainCredentials | undefined,
  ) {
    this.credentials = credentials;
  }

  getCredentials(): BrainCredentials | undefined {
    return this.credentials;
  }

  current(): HostEndpoint | undefined {
    return this.credentials && endpointOf(this.credentials);
  }

  async register(): Promise<HostEndpoint> {
    if (this.credentials === undefined) {
      const host = await this.http.request("POST", "/v1/hosts", { body: {}, schema: RegisteredHostSchema });
      this.credentials ??= { hostId: host.id, hostToken: host.token };
    }
    return endpointOf(this.credentials);
  }
}

function endpointOf(c: BrainCredentials): HostEndpoint {
  return {
    hostId: c.hostId,
    token: c.hostToken,
    path: `/v1/hosts/${encodeURIComponent(c.hostId)}/connect?sessions=attached`,
  };
}

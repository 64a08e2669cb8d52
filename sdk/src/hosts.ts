import { BrainError, RegisteredReplicaSchema, type ToolPlacement } from "./contracts.js";
import { APPLICATION_ENV, hostEnv } from "./environment.js";
import { HostConnection, type HostEndpoint, type HostIdentity } from "./host-connection.js";
import type { HttpClient } from "./http-client.js";
import { isPlacedTool, type PlacedTool, runtimeOf } from "./tool.js";

export interface ServeOptions {
  /** The named host: sessions reach it with `lookup({ env: hostEnv({ name }), ...options })`. */
  name: string;
  /**
   * The tools this process serves, placed with this process's own options (`lookup({ prefix })`,
   * or `lookup({ env: hostEnv({ name }), prefix })`): the session creator's options stay with it.
   */
  tools: readonly PlacedTool[];
}

/** A named host this process serves; `close()` stops serving it (so does `brain.close()`). */
export interface ServedHost {
  readonly name: string;
  readonly hostId: string;
  close(): Promise<void>;
}

/**
 * `brain.hosts`: named hosts served by this process. Any number of processes may serve one named
 * host at once (replicas); each call goes to one of them.
 */
export class Hosts {
  readonly #http: HttpClient;
  readonly #served = new Set<HostConnection>();

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * Serves the named host `name` with these tools until closed: registers this process as a
   * replica and connects. Resolves once Brain accepted the connection; rejects with
   * `tool_mismatch` when the tools are not exactly those (names, input and output schemas) that
   * the host's active sessions advertise. Lost connections reconnect like the client's own host.
   */
  async serve(options: ServeOptions): Promise<ServedHost> {
    const env = hostEnv({ name: options.name });
    if (env.name === APPLICATION_ENV.name) {
      throw new BrainError("invalid_options", `"${APPLICATION_ENV.name}" is every client's own host; name another.`);
    }
    const tools = [...options.tools];
    const placements = tools.map((placed) => servedPlacement(placed, env.name));
    const identity = new ReplicaIdentity(this.#http, env.name, placements);
    const conn = new HostConnection(this.#http, identity);
    conn.dispatcher.serve(tools);
    try {
      const endpoint = await conn.ensure();
      this.#served.add(conn);
      return {
        name: env.name,
        hostId: endpoint.hostId,
        close: async () => {
          this.#served.delete(conn);
          await conn.close();
        },
      };
    } catch (err) {
      await conn.close();
      throw err;
    }
  }

  /** Stops serving every named host (brain.close()). */
  async closeAll(): Promise<void> {
    const all = [...this.#served];
    this.#served.clear();
    await Promise.all(all.map((c) => c.close()));
  }
}

/** The placement a replica advertises: its tool placed in the named host, with its own `run`. */
function servedPlacement(placed: PlacedTool, name: string): ToolPlacement {
  if (!isPlacedTool(placed)) {
    throw new BrainError("invalid_tool", "serve takes placed tools: call the tool factory, e.g. lookup().");
  }
  runtimeOf(placed); // only run tools can be served by a process
  const env = placed.env;
  if (env.type !== "host" || env.url || (env.name !== APPLICATION_ENV.name && env.name !== name)) {
    throw new BrainError(
      "invalid_options",
      `${placed.name}: a replica of ${name} serves tools placed in it (or with no env).`,
    );
  }
  return { ...placed.placement, env: { type: "host", name } };
}

/** A replica registers once (`POST /v1/named-hosts/:name/replicas`) and reconnects with its token. */
class ReplicaIdentity implements HostIdentity {
  readonly namesSessions = false;
  #endpoint: HostEndpoint | undefined;

  constructor(
    private readonly http: HttpClient,
    private readonly name: string,
    private readonly tools: ToolPlacement[],
  ) {}

  current(): HostEndpoint | undefined {
    return this.#endpoint;
  }

  async register(): Promise<HostEndpoint> {
    const served = await this.http.request("POST", `/v1/named-hosts/${encodeURIComponent(this.name)}/replicas`, {
      body: { tools: this.tools },
      schema: RegisteredReplicaSchema,
    });
    this.#endpoint ??= {
      hostId: served.hostId,
      token: served.token,
      path: `/v1/replicas/${encodeURIComponent(served.replicaId)}/connect`,
    };
    return this.#endpoint;
  }
}

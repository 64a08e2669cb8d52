import type { HostLink } from "./link.js";

/**
 * The host WebSockets this process terminates. A host may briefly have two (a reconnect). Generic
 * so that the runtime keeps its connections' full type while the dispatcher sees only HostLinks.
 */
export class HostRegistry<C extends HostLink = HostLink> {
  private readonly byHost = new Map<string, C[]>();
  private readonly byConnection = new Map<string, C>();

  add(conn: C): void {
    const list = this.byHost.get(conn.hostId) ?? [];
    list.push(conn);
    this.byHost.set(conn.hostId, list);
    this.byConnection.set(conn.id, conn);
  }

  remove(conn: C): void {
    this.byConnection.delete(conn.id);
    const list = (this.byHost.get(conn.hostId) ?? []).filter((c) => c !== conn);
    if (list.length > 0) this.byHost.set(conn.hostId, list);
    else this.byHost.delete(conn.hostId);
  }

  /** The newest open connection of a host. */
  current(hostId: string): C | undefined {
    const list = this.byHost.get(hostId);
    for (let i = (list?.length ?? 0) - 1; i >= 0; i--) {
      const c = list![i]!;
      if (c.isOpen) return c;
    }
    return undefined;
  }

  /** The newest open connection of a host that serves the session (see C.serves). */
  serving(hostId: string, sessionId: string): C | undefined {
    const list = this.byHost.get(hostId);
    for (let i = (list?.length ?? 0) - 1; i >= 0; i--) {
      const c = list![i]!;
      if (c.isOpen && c.serves(sessionId)) return c;
    }
    return undefined;
  }

  /**
   * The connections that claim a host's pending calls when told of them: every replica of a
   * named host, every connection naming its sessions (each claims only those), and the newest of
   * the connections that name none.
   */
  claimants(hostId: string): C[] {
    const open = this.ofHost(hostId).filter((c) => c.isOpen);
    const naming = open.filter((c) => c.replicaId !== null || c.servedSessions() !== null);
    const legacy = open.filter((c) => c.replicaId === null && c.servedSessions() === null).at(-1);
    return legacy ? [...naming, legacy] : naming;
  }

  /** The sessions connections here said they serve, with their host. */
  *served(): IterableIterator<readonly [sessionId: string, hostId: string]> {
    for (const c of this.byConnection.values()) for (const id of c.servedSessions() ?? []) yield [id, c.hostId];
  }

  /** The hosts with a connection here. */
  hostIds(): IterableIterator<string> {
    return this.byHost.keys();
  }

  ofHost(hostId: string): C[] {
    return this.byHost.get(hostId) ?? [];
  }

  byId(connectionId: string): C | undefined {
    return this.byConnection.get(connectionId);
  }

  all(): C[] {
    return [...this.byConnection.values()];
  }
}

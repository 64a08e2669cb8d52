/**
 * What a server holds open for a principal beyond one request's answer: event streams followed,
 * MCP requests waiting on a call. Each is ended when the server shuts down, and those of an
 * application token when it is revoked (see revocation.ts).
 */
export class OwnedStreams {
  private readonly open = new Map<() => void, string | null>();

  /** Registers a stream of `owner` (a token's id; null: the operator); returns its unregistering. */
  add(owner: string | null, end: () => void): () => void {
    this.open.set(end, owner);
    return () => {
      this.open.delete(end);
    };
  }

  /** The application tokens that own something here now. */
  owners(): Set<string> {
    const ids = new Set<string>();
    for (const owner of this.open.values()) if (owner !== null) ids.add(owner);
    return ids;
  }

  /** Ends the streams of these owners (every stream when `owners` is undefined). */
  end(owners?: ReadonlySet<string>): number {
    let ended = 0;
    for (const [end, owner] of [...this.open]) {
      if (owners && (owner === null || !owners.has(owner))) continue;
      this.open.delete(end);
      end();
      ended++;
    }
    return ended;
  }
}

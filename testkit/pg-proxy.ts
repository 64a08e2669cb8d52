import { createServer, type Socket, connect as tcpConnect } from "node:net";

/**
 * A TCP proxy in front of a test's Postgres that can lose a connection at one exact moment of the
 * protocol: right after the server has committed and before its client hears so. That is the
 * crash point no trigger can reach (a deferred trigger runs before the commit), where only the
 * writer's mark tells what happened.
 */
export interface PgProxy {
  /** `url` (a Postgres URL) pointed at the proxy instead. */
  through(url: string): string;
  /**
   * The next CommandComplete of a COMMIT is not delivered: what came before it in its chunk is,
   * then both sides of that connection are cut. One shot.
   */
  loseNextCommitAnswer(): void;
  /**
   * The next `count` answers to COMMIT are not delivered, nor anything between them: from the
   * first, what the server sends is swallowed while it goes on running what it was sent, and the
   * connection is cut once the last of them has passed. With 2, a batch sent behind another
   * commits while its client has heard of neither. One shot.
   */
  loseCommitAnswers(count: number): void;
  /** How many connections were cut that way. */
  readonly cuts: number;
  close(): Promise<void>;
}

// CommandComplete ('C'), length 11, "COMMIT\0".
const COMMIT_COMPLETE = Buffer.from([0x43, 0, 0, 0, 11, ...Buffer.from("COMMIT\0", "latin1")]);

export async function startPgProxy(url: string): Promise<PgProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  let armed = false;
  /** Answers to COMMIT still to swallow in `loseCommitAnswers` mode (0: off). */
  let toSwallow = 0;
  let cuts = 0;
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    const cut = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (chunk) => upstream.write(chunk));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    let swallowing = false;
    upstream.on("data", (chunk: Buffer) => {
      if (toSwallow > 0) {
        let from = 0;
        for (;;) {
          const at = chunk.indexOf(COMMIT_COMPLETE, from);
          if (at < 0) break;
          if (!swallowing) {
            swallowing = true;
            if (at > 0) client.write(chunk.subarray(0, at));
          }
          from = at + COMMIT_COMPLETE.length;
          if (--toSwallow === 0) {
            cuts++;
            cut();
            return;
          }
        }
        if (!swallowing) client.write(chunk);
        return;
      }
      const at = armed ? chunk.indexOf(COMMIT_COMPLETE) : -1;
      if (at < 0) {
        client.write(chunk);
        return;
      }
      armed = false;
      cuts++;
      if (at > 0) client.write(chunk.subarray(0, at), cut);
      else cut();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    through(u: string) {
      const proxied = new URL(u);
      proxied.hostname = "127.0.0.1";
      proxied.port = String(port);
      return proxied.toString();
    },
    loseNextCommitAnswer() {
      armed = true;
    },
    loseCommitAnswers(count: number) {
      toSwallow = count;
    },
    get cuts() {
      return cuts;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

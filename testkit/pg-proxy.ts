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
    upstream.on("data", (chunk: Buffer) => {
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
    get cuts() {
      return cuts;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

import { createServer, type Socket, connect as tcpConnect } from "node:net";

/** A TCP proxy on loopback in front of a Postgres URL's host and port. */
export interface TcpProxy {
  /** `url` (a Postgres URL) pointed at the proxy instead. */
  through(url: string): string;
  /** Closes the listener and every connection through it. */
  close(): Promise<void>;
}

/** One client's connection and the proxy's to the server for it. */
export interface ProxiedConnection {
  client: Socket;
  upstream: Socket;
  /** Cuts both sides at once. */
  cut(): void;
}

/**
 * Listens on 127.0.0.1 and connects each client to `url`'s host and port; closing either side
 * closes the other. What flows between them is `relay`'s to wire: it reads or rewrites the bytes
 * in each direction (the plain relay is `client → upstream.write`, `upstream → client.write`).
 */
export async function startTcpProxy(url: string, relay: (c: ProxiedConnection) => void): Promise<TcpProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    relay({
      client,
      upstream,
      cut: () => {
        client.destroy();
        upstream.destroy();
      },
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
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

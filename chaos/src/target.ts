// The service behind the run's HTTP Environment: a Brain worker calls GET /chaos/{n} for each
// `fetch` call. It counts the requests per n (a call run twice would show as 2) and answers after
// a delay, so worker kills land mid-request too.
import { createServer, type Server } from "node:http";

export interface Target {
  url: string;
  /** Requests received, per n. */
  received: Map<number, number>;
  close(): Promise<void>;
}

export async function startTarget(): Promise<Target> {
  const received = new Map<number, number>();
  const server: Server = createServer((req, res) => {
    const m = /^\/chaos\/(-?\d+)$/.exec(req.url ?? "");
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const n = Number(m[1]);
    received.set(n, (received.get(n) ?? 0) + 1);
    setTimeout(
      () => {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ n }));
      },
      (Math.imul(n, 2654435761) >>> 0) % 800,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

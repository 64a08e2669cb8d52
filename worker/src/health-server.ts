import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";

/** What the worker knows of itself, for its probes. */
export interface WorkerHealth {
  workerId: string;
  /** The database answers (no connection error since the last successful heartbeat). */
  database: boolean;
  /** Milliseconds since the last heartbeat that reached the database. */
  heartbeatAgeMs: number;
  /** pg-boss is started and consuming (false once stopping). */
  boss: boolean;
}

export interface HealthServer {
  url: string;
  close(): Promise<void>;
}

/**
 * The worker's probes, on their own small HTTP server (BRAIN_WORKER_HEALTH_PORT): `/healthz`
 * answers while the process runs; `/readyz` answers 200 only while the database answers, the
 * heartbeat is fresh (within `staleMs`) and pg-boss is started, else 503. Both say why in JSON.
 * With a registry, `/metrics` answers its Prometheus exposition (as private as the probes: the
 * port listens on BRAIN_WORKER_HEALTH_HOST, 127.0.0.1 by default).
 */
export async function startHealthServer(
  host: string,
  port: number,
  staleMs: number,
  health: () => WorkerHealth,
  metrics?: Registry,
): Promise<HealthServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (path === "/metrics" && metrics) {
      metrics.metrics().then(
        (text) => res.writeHead(200, { "content-type": metrics.contentType }).end(text),
        () => res.writeHead(500, { "content-type": "application/json" }).end('{"error":"metrics failed"}'),
      );
      return;
    }
    const h = health();
    let status = 404;
    let body: object = { error: "not found" };
    if (path === "/healthz") {
      status = 200;
      body = { status: "ok", workerId: h.workerId };
    } else if (path === "/readyz") {
      const heartbeat = h.heartbeatAgeMs <= staleMs;
      const ready = h.database && heartbeat && h.boss;
      status = ready ? 200 : 503;
      body = {
        status: ready ? "ready" : "unavailable",
        workerId: h.workerId,
        database: h.database,
        heartbeat,
        boss: h.boss,
      };
    }
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

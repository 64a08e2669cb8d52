// The egress guard's judgement happens before any socket is opened: names resolve through a
// resolver the test controls, and the connector that would open sockets is watched. Only loopback
// is ever connected to (a local server, a local proxy); every other address is refused, or handed
// to the watched connector, which refuses to connect, so no packet leaves this machine.
import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { buildConnector } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EgressDenied, egressDeniedIn } from "../src/egress/denied.js";
import { Egress, type Resolve } from "../src/egress/guard.js";
import { parseEgressAllow } from "../src/egress/rules.js";

let server: Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? "");
    if (req.url === "/to-private") return res.writeHead(302, { location: "http://10.0.0.7/inside" }).end();
    if (req.url === "/to-metadata-name") return res.writeHead(302, { location: "http://metadata.test/" }).end();
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ host: req.headers.host }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Names the test knows, as a resolver would answer them; anything else does not resolve. */
const NAMES: Record<string, string[]> = {
  "metadata.test": ["169.254.169.254"],
  "intranet.test": ["10.0.0.5"],
  "rebind.test": ["93.184.216.34", "192.168.0.10"],
  "public.test": ["93.184.216.34"],
  "local.test": ["127.0.0.1"],
};

interface Watch {
  egress: Egress;
  resolved: string[];
  /** The connections asked of the connector: the address it was given, and the TLS name. */
  connects: { hostname: string; servername: string | undefined }[];
}

/** A guard whose connector connects to loopback only and records every connection asked of it. */
function watched(allow: string, proxy?: string): Watch {
  const resolved: string[] = [];
  const connects: Watch["connects"] = [];
  const resolve: Resolve = async (name) => {
    resolved.push(name);
    const found = NAMES[name];
    if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return found;
  };
  const real = buildConnector({});
  const connect: buildConnector.connector = (options, callback) => {
    connects.push({ hostname: options.hostname, servername: options.servername });
    if (options.hostname !== "127.0.0.1") return callback(new Error("the test connector reaches loopback only"), null);
    real(options, callback);
  };
  return { egress: new Egress({ allow: parseEgressAllow(allow), proxy, resolve, connect }), resolved, connects };
}

const get = (egress: Egress, url: string, headers: Record<string, string> = {}) =>
  egress.exchange(new URL(url), { method: "GET", headers, signal: AbortSignal.timeout(10_000), maxBytes: 10_000 });

async function refusal(work: Promise<unknown>): Promise<EgressDenied> {
  const error = await work.then(
    () => null,
    (e: unknown) => e,
  );
  const denied = egressDeniedIn(error);
  if (!denied) throw new Error(`expected an egress refusal, got ${String(error)}`);
  return denied;
}

describe("the egress guard", () => {
  it("refuses internal literals before opening any socket", async () => {
    const w = watched("");
    for (const url of [
      "http://169.254.169.254/latest/meta-data/iam/",
      `http://127.0.0.1:${port}/`,
      "http://[::1]/",
      "http://10.1.2.3/",
      "http://[fd00:ec2::254]/",
      "http://100.100.100.200/",
      "http://0.0.0.0/",
      "http://[::ffff:169.254.169.254]/",
    ]) {
      const denied = await refusal(get(w.egress, url));
      expect(denied.code, url).toBe("egress_denied");
    }
    expect((await refusal(get(w.egress, "http://169.254.169.254/"))).details).toEqual({
      host: "169.254.169.254",
      port: 80,
      range: "cloud metadata",
    });
    expect(w.connects).toEqual([]);
    expect(seen).toEqual([]);
  });

  it("resolves a name once, refuses it if any address is internal, and connects to the address it judged", async () => {
    const w = watched("");
    expect((await refusal(get(w.egress, "http://metadata.test/"))).message).toMatch(
      /resolves to a cloud metadata address/,
    );
    expect((await refusal(get(w.egress, "https://intranet.test/"))).details).toMatchObject({
      range: "private",
      port: 443,
    });
    // One public answer and one private one: the name is refused whole.
    await refusal(get(w.egress, "http://rebind.test/"));
    expect(w.connects).toEqual([]);
    // A public name goes to the connector as the judged address, with the name kept for TLS.
    await expect(get(w.egress, "https://public.test/x")).rejects.toThrow();
    expect(w.connects).toEqual([{ hostname: "93.184.216.34", servername: "public.test" }]);
    expect(w.resolved.filter((n) => n === "public.test")).toHaveLength(1);
  });

  it("opens exactly what BRAIN_EGRESS_ALLOW names: an address and port, or a name whatever it resolves to", async () => {
    const byPort = watched(`127.0.0.1:${port}`);
    expect((await get(byPort.egress, `http://127.0.0.1:${port}/a`)).status).toBe(200);
    await refusal(get(byPort.egress, `http://127.0.0.1:${port + 1}/`));
    const byName = watched(`local.test:${port}`);
    const answer = await get(byName.egress, `http://local.test:${port}/b`);
    expect(JSON.parse(answer.body.toString())).toEqual({ host: `local.test:${port}` });
    await refusal(get(byName.egress, `http://127.0.0.1:${port}/`));
    expect(seen).toEqual(["/a", "/b"]);
  });

  it("judges every redirect hop again: a loopback service cannot bounce a request inward", async () => {
    const w = watched(`127.0.0.1:${port}`);
    const hop = async (path: string) => {
      seen.length = 0;
      const error = await w.egress.fetch(`http://127.0.0.1:${port}${path}`).then(
        () => null,
        (e: unknown) => e,
      );
      expect(egressDeniedIn(error)?.code).toBe("egress_denied");
      expect(seen).toEqual([path]);
    };
    await hop("/to-private");
    await hop("/to-metadata-name");
    expect(new Set(w.connects.map((c) => c.hostname))).toEqual(new Set(["127.0.0.1"]));
  });

  it("refuses a Host or hop-by-hop header, credentials in the URL and other schemes, before anything else", async () => {
    const w = watched(`127.0.0.1:${port}`);
    const base = `http://127.0.0.1:${port}/`;
    for (const header of ["Host", "connection", "Transfer-Encoding", "proxy-authorization", "upgrade"]) {
      expect((await refusal(get(w.egress, base, { [header]: "x" }))).message).toMatch(/set by Brain/);
    }
    expect((await refusal(get(w.egress, `http://user:pw@127.0.0.1:${port}/`))).message).toMatch(/credentials/);
    await refusal(w.egress.fetch(`file:///etc/passwd`));
    await refusal(w.egress.fetch(base, { headers: { Host: "169.254.169.254" } }));
    expect(w.connects).toEqual([]);
  });

  it("judges at session creation what it can: literals and names that resolve now", async () => {
    const w = watched("vault.test");
    expect((await w.egress.preflight("http://169.254.169.254/"))?.code).toBe("egress_denied");
    expect((await w.egress.preflight("http://intranet.test/"))?.details?.range).toBe("private");
    expect(await w.egress.preflight("https://public.test/")).toBeNull();
    // Not resolvable now: judged when called.
    expect(await w.egress.preflight("https://later.test/")).toBeNull();
    // Opened by name: not even resolved.
    expect(await w.egress.preflight("http://vault.test/")).toBeNull();
    expect(w.resolved).not.toContain("vault.test");
    expect((await w.egress.preflight("http://a:b@public.test/"))?.message).toMatch(/credentials/);
    expect(w.connects).toEqual([]);
  });

  it("through a proxy, judges each target before handing it over; the proxy connects", async () => {
    const tunnels: string[] = [];
    const proxy = createServer();
    proxy.on("connect", (req, socket: Socket) => {
      tunnels.push(req.url ?? "");
      socket.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      // The proxy answers itself: nothing is forwarded anywhere.
      server.emit("connection", socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const w = watched("", `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`);
    try {
      await refusal(get(w.egress, "http://intranet.test/"));
      await refusal(get(w.egress, "http://169.254.169.254/"));
      expect(tunnels).toEqual([]);
      const answer = await get(w.egress, "http://public.test/through");
      expect(answer.status).toBe(200);
      expect(tunnels).toEqual(["public.test:80"]);
    } finally {
      await w.egress.close();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    }
  });
});

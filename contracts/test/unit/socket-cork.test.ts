import { once } from "node:events";
import { createServer, type Socket, connect as tcpConnect } from "node:net";
import { corkPerTick } from "@aexhq/brain-contracts";
import { afterEach, describe, expect, it } from "vitest";

const cleanup: (() => void)[] = [];
afterEach(() => {
  for (const fn of cleanup.splice(0)) fn();
});

/** A connected loopback pair: `client` (the one corked) and what the server receives. */
async function pair(): Promise<{ client: Socket; received: () => string }> {
  let text = "";
  const server = createServer((s) => s.on("data", (d) => (text += d)));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as { port: number };
  const client = tcpConnect(port, "127.0.0.1");
  await once(client, "connect");
  cleanup.push(() => {
    client.destroy();
    server.close();
  });
  return { client, received: () => text };
}

describe("corkPerTick", () => {
  it("holds a tick's writes and sends them together once the tick's work is done", async () => {
    const { client, received } = await pair();
    corkPerTick(client);
    client.write("a");
    client.write("b");
    // Still held: nothing has been handed to the kernel yet.
    expect(client.writableCorked).toBe(1);
    expect(client.writableLength).toBe(2);
    await new Promise((r) => process.nextTick(r));
    expect(client.writableCorked).toBe(0);
    client.write("c");
    expect(client.writableCorked).toBe(1);
    await expect.poll(received).toBe("abc");
  });

  it("sends what the tick has written at once when flushed, and holds the tick's later writes again", async () => {
    const { client, received } = await pair();
    const flush = corkPerTick(client);
    client.write("invoke");
    flush();
    // Handed to the kernel in this tick, not at its end.
    expect(client.writableCorked).toBe(0);
    expect(client.writableLength).toBe(0);
    client.write("ack");
    expect(client.writableCorked).toBe(1);
    await expect.poll(received).toBe("invokeack");
  });

  it("nests inside its owner's own cork, and leaves a destroyed socket alone", async () => {
    const { client, received } = await pair();
    corkPerTick(client);
    client.cork();
    client.write("x");
    client.uncork();
    expect(client.writableCorked).toBe(1);
    await expect.poll(received).toBe("x");
    client.write("y");
    client.destroy();
    await new Promise((r) => process.nextTick(r));
    expect(client.destroyed).toBe(true);
  });
});

describe("corkPerTick, closing", () => {
  it("sends what the tick wrote before a destroy or an end in the same tick", async () => {
    for (const close of ["destroy", "end"] as const) {
      const { client, received } = await pair();
      corkPerTick(client);
      client.write("last words");
      client[close]();
      await expect.poll(received).toBe("last words");
    }
  });
});

import { readdirSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { BrainError } from "@aexhq/brain-contracts";
import type { FastifyInstance, FastifyReply } from "fastify";

/** The console's files: `server/console/`, beside `dist/` in a checkout and in the package. */
const CONSOLE_DIR = fileURLToPath(new URL("../../console/", import.meta.url));

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * The page may run only its own files and talk only to this server; journal text it shows is
 * never markup (the scripts use textContent), and this makes a slip fail closed as well.
 */
const HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-cache",
};

/**
 * Serves the journal console: static files, public because they hold no data (every route they
 * read takes the operator token, which the page asks for). The directory is flat and read once:
 * only the files found there at start are served, so no request path ever reaches the filesystem.
 */
export async function consoleFileRoutes(app: FastifyInstance): Promise<void> {
  const files = new Map<string, { body: Buffer; type: string }>();
  for (const name of readdirSync(CONSOLE_DIR)) {
    const type = TYPES[extname(name)];
    if (type) files.set(name, { body: readFileSync(join(CONSOLE_DIR, name)), type });
  }
  const send = (reply: FastifyReply, name: string) => {
    const file = files.get(name);
    if (!file) throw new BrainError("not_found");
    return reply.headers(HEADERS).type(file.type).send(file.body);
  };
  app.get("/console", async (_request, reply) => reply.redirect("/console/", 308));
  app.get("/console/", async (_request, reply) => send(reply, "index.html"));
  app.get<{ Params: { file: string } }>("/console/:file", async (request, reply) => send(reply, request.params.file));
}

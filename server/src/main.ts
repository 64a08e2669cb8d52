// Entry point: the only place that reads the environment.
import { buildApp } from "./app.js";
import { parseConfig } from "./config.js";
import { prepareDatabase } from "./database.js";
import { devOperatorToken } from "./operator-token.js";

async function main(): Promise<void> {
  const config = parseConfig(process.env);
  const db = await prepareDatabase(config, () => {});
  const dev = config.apiToken ? null : devOperatorToken(config.dataDir);
  const apiToken = config.apiToken ?? dev!.token;
  const app = await buildApp({ config, sql: db.sql, databaseUrl: db.url, apiToken });
  const address = await app.listen({ host: config.host, port: config.port });

  const url = address.replace("[::1]", "localhost");
  process.stdout.write(`Brain listening on ${url}\n`);
  process.stdout.write(
    `Postgres: ${db.embedded ? `embedded, under ${config.dataDir}/pg` : "DATABASE_URL"}; schema ${config.schema}\n`,
  );
  if (dev) {
    // The operator asked for a generated token by not setting one; showing it is the point.
    process.stdout.write(`Operator token (saved in ${dev.path}): ${dev.token}\n`);
    process.stdout.write(`Try: export BRAIN_URL=${url} BRAIN_TOKEN=${dev.token}\n`);
  }

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    // The app's onClose hooks still write (calls lost with our connections): the pool goes last.
    app
      .close()
      .then(() => db.close())
      .then(
        () => process.exit(0),
        (err) => {
          app.log.error({ err }, "shutdown failed");
          process.exit(1);
        },
      );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

main().catch((error) => {
  process.stderr.write(`brain: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});

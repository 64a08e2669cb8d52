import { randomUUID } from "node:crypto";
import { BrainError, corkPerTick } from "@aexhq/brain-contracts";
import { closeConnection, endCalls, hostAuth, openConnection } from "@aexhq/brain-db/ops";
import { isUnavailable } from "@aexhq/brain-db/writer";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { HostConnection } from "../hosts/connection.js";
import { bearer, tokenMatches } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";

const ParamsSchema = z.strictObject({ id: z.uuid() });
/** `sessions=attached`: the host names the sessions it serves (attach frames); only theirs are sent. */
const QuerySchema = z.object({ sessions: z.enum(["attached", "all"]).optional() });
const opened = new WeakMap<FastifyRequest, { connectionId: string; ownerTokenId: string | null }>();

/**
 * Hosts keep a WebSocket open here. Authentication happens before the upgrade, and the
 * connection's row is committed before the socket exists, so any call dispatched on it can be
 * found (and ended `unknown`) if it is lost.
 */
export async function hostSocketRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.get(
    "/v1/hosts/:id/connect",
    {
      websocket: true,
      preValidation: async (request) => {
        const { id } = parseInput(ParamsSchema, request.params);
        const auth = await hostAuth(rt.sql, id);
        if (!auth || !tokenMatches(bearer(request), auth.tokenHash)) throw new BrainError("unauthorized");
        const connectionId = randomUUID();
        await openConnection(rt.sql, connectionId, id, rt.serverId);
        opened.set(request, { connectionId, ownerTokenId: auth.tokenId });
      },
    },
    (socket, request) => {
      const { id: hostId } = request.params as { id: string };
      const query = QuerySchema.safeParse(request.query);
      const attachedOnly = query.success && query.data.sessions === "attached";
      // A commit sends many frames to one host at once: one system call for them all.
      const flush = corkPerTick(request.raw.socket);
      const { connectionId, ownerTokenId } = opened.get(request)!;
      const conn = new HostConnection(rt, socket, connectionId, hostId, { attachedOnly, flush, ownerTokenId });
      rt.hosts.add(conn);
      conn.start(() => {
        rt.hosts.remove(conn);
        const recordLoss = () =>
          rt.writer
            .submit(endCalls({ connectionId: conn.id }, { status: "unknown", cause: "connection_lost" }))
            .then(() => closeConnection(rt.sql, conn.id));
        void recordLoss().catch((err) => {
          // The database is away: the loss is recorded once it answers again.
          rt.repairs.add(`connection:${conn.id}`, recordLoss);
          if (!rt.availability.observe(err) && !isUnavailable(err)) {
            rt.log.error({ err, connectionId: conn.id }, "could not record a lost connection");
          }
        });
      });
      void rt.dispatch.claimFor(conn).catch((err) => rt.log.error({ err }, "claiming pending calls failed"));
    },
  );
}

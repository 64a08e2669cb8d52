import { randomBytes, randomUUID } from "node:crypto";
import { BrainError, ServeHostBodySchema } from "@aexhq/brain-contracts";
import { closeReplicaConnection, insertReplica, openReplicaConnection, replicaAuth } from "@aexhq/brain-db/ops";
import { isUnavailable } from "@aexhq/brain-db/writer";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { HostConnection } from "../hosts/connection.js";
import { bearer, digest, ownerOf, tokenMatches } from "../plugins/auth.js";
import { parseInput } from "../plugins/validate.js";

const NameSchema = z.strictObject({ name: z.string().regex(/^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/) });

/**
 * Registers a replica of a named host in the caller's namespace (its application token, or the
 * operator's): the tools it serves, every one placed in the host named by the route.
 */
export async function namedHostRoutes(app: FastifyInstance): Promise<void> {
  app.post("/v1/named-hosts/:name/replicas", async (request, reply) => {
    const { name } = parseInput(NameSchema, request.params);
    const body = parseInput(ServeHostBodySchema, request.body);
    const names = new Set<string>();
    for (const t of body.tools) {
      if (t.env.type !== "host" || t.env.name !== name || t.env.url || t.env.protocol || t.implementation) {
        throw new BrainError("invalid_placement", `${t.name}: a replica of ${name} serves run tools placed in it.`);
      }
      if (names.has(t.name)) throw new BrainError("duplicate_tool", `Two tools are named ${JSON.stringify(t.name)}.`);
      names.add(t.name);
    }
    const replicaId = randomUUID();
    const token = `bhr_${randomBytes(32).toString("base64url")}`;
    const owner = ownerOf(request.principal);
    const hostId = await insertReplica(
      app.brain.sql,
      { id: replicaId, name, owner, tokenHash: digest(token), tools: body.tools },
      await app.brain.quotas.guard(owner, "hosts"),
    );
    return reply.status(201).send({ hostId, replicaId, token });
  });
}

const ReplicaParams = z.strictObject({ id: z.uuid() });
const opened = new WeakMap<FastifyRequest, { connectionId: string; hostId: string; ownerTokenId: string | null }>();

/**
 * A replica's WebSocket. Before the upgrade: the replica token, then the tool check against every
 * active session of the host (`tool_mismatch`, HTTP 409), and the connection row, committed before
 * the socket exists so that calls claimed for it can be found when it is lost.
 */
export async function replicaSocketRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.brain;
  app.get(
    "/v1/replicas/:id/connect",
    {
      websocket: true,
      preValidation: async (request) => {
        const { id } = parseInput(ReplicaParams, request.params);
        const auth = await replicaAuth(rt.sql, id);
        if (!auth || !tokenMatches(bearer(request), auth.tokenHash)) throw new BrainError("unauthorized");
        const connectionId = randomUUID();
        await openReplicaConnection(rt.sql, {
          id: connectionId,
          replicaId: id,
          hostId: auth.hostId,
          serverId: rt.serverId,
        });
        opened.set(request, { connectionId, hostId: auth.hostId, ownerTokenId: auth.tokenId });
      },
    },
    (socket, request) => {
      const { id: replicaId } = request.params as { id: string };
      const { connectionId, hostId, ownerTokenId } = opened.get(request)!;
      const conn = new HostConnection(rt, socket, connectionId, hostId, { replicaId, ownerTokenId });
      rt.hosts.add(conn);
      conn.start(() => {
        rt.hosts.remove(conn);
        const recordLoss = () => rt.writer.submit(closeReplicaConnection(hostId, connectionId));
        void recordLoss().catch((err) => {
          // The database is away: the loss is recorded once it answers again.
          rt.repairs.add(`connection:${connectionId}`, recordLoss);
          if (!rt.availability.observe(err) && !isUnavailable(err)) {
            rt.log.error({ err, connectionId }, "could not record a lost replica connection");
          }
        });
      });
      void rt.dispatch.claimFor(conn).catch((err) => rt.log.error({ err }, "claiming a named host's calls failed"));
    },
  );
}

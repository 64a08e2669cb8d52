/**
 * The egress settings every process that reaches tenant-chosen addresses reads (server, worker),
 * validated once by their configuration schemas.
 */
import { z } from "zod";
import { type EgressRule, LOOPBACK_ALLOW, parseEgressAllow } from "./rules.js";

export const EgressEnvSchema = z.object({
  /**
   * Internal addresses Brain may reach (hostnames, IP addresses, CIDR ranges, each optionally
   * with a port). Unset: none, except loopback on the embedded development default.
   */
  BRAIN_EGRESS_ALLOW: z
    .string()
    .superRefine((text, ctx) => {
      try {
        parseEgressAllow(text);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
      }
    })
    .optional(),
  /** An HTTP(S) proxy for every request to a tenant-chosen address. */
  BRAIN_EGRESS_PROXY: z
    .string()
    .refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), "an http(s) URL")
    .optional(),
  /** The most an upstream (a model provider, an MCP server) may answer in one response. */
  BRAIN_MAX_UPSTREAM_BYTES: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(16 * 1024 * 1024),
});

export interface EgressConfig {
  allow: EgressRule[];
  proxy: string | undefined;
  /** Loopback is open because nothing was set on the embedded development default (the banner says so). */
  loopbackByDefault: boolean;
}

/** The rules of a parsed environment; `embedded`: the development default, where loopback is open. */
export function egressConfig(env: z.output<typeof EgressEnvSchema>, embedded: boolean): EgressConfig {
  const loopbackByDefault = env.BRAIN_EGRESS_ALLOW === undefined && embedded;
  const text = env.BRAIN_EGRESS_ALLOW ?? (loopbackByDefault ? LOOPBACK_ALLOW : "");
  return { allow: parseEgressAllow(text), proxy: env.BRAIN_EGRESS_PROXY, loopbackByDefault };
}

// Tests serve everything Brain calls (fake providers, MCP servers, HTTP tools) on loopback, which
// the egress guard refuses unless opened. These open it, as `npm start` does on its embedded
// default; the egress tests narrow it again to show the refusals.
import { Egress, type EgressConfig, LOOPBACK_ALLOW, parseEgressAllow } from "@aexhq/brain-core/egress";

/** For a server or worker configured from its environment. */
export const LOOPBACK_EGRESS_ENV: Readonly<Record<string, string>> = { BRAIN_EGRESS_ALLOW: LOOPBACK_ALLOW };

/** For a worker configured in code: loopback open, unless `allow` says what is. */
export function loopbackEgressConfig(allow: string = LOOPBACK_ALLOW): {
  egress: EgressConfig;
  maxUpstreamBytes: number;
} {
  return {
    egress: { allow: parseEgressAllow(allow), proxy: undefined, loopbackByDefault: false },
    maxUpstreamBytes: 16 * 1024 * 1024,
  };
}

/** A guard that reaches loopback, for code under test that takes one. */
export function loopbackEgress(): Egress {
  return new Egress({ allow: parseEgressAllow(LOOPBACK_ALLOW) });
}

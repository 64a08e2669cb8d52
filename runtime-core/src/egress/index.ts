// `@aexhq/brain-core/egress`: the one guard every request to a tenant-chosen address goes through
// (see guard.ts), its rules (BRAIN_EGRESS_ALLOW) and its refusal.
export { cappedFetch, cappedResponse, type Upstream } from "./capped.js";
export { type EgressConfig, EgressEnvSchema, egressConfig } from "./config.js";
export { deniedOutcome, EgressDenied, egressDeniedIn } from "./denied.js";
export type { HttpAnswer, HttpExchange } from "./exchange.js";
export { Egress, type EgressOptions, type Resolve } from "./guard.js";
export { type AddressKind, addressKind, parseAddress } from "./ranges.js";
export { type EgressRule, LOOPBACK_ALLOW, parseEgressAllow } from "./rules.js";

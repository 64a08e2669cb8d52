// The comparison lives in contracts: the server applies the same rules to named-host replicas.
export { placementDifferences } from "./contracts.js";

// The SDK's one import of the contracts package: every module of the SDK imports it from here, so
// that `npm run pack:sdk` can point this one module at a copy carried in the tarball (scripts/pack.mjs).
export * from "@aexhq/brain-contracts";

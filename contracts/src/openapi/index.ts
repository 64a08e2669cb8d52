// The OpenAPI description of the server's HTTP API (`@aexhq/brain-contracts/openapi`): kept out of
// the package's main entry, which the SDK vendors, so the SDK never carries zod-openapi.
export { errorsByStatus, openApiDocument, openApiPath, renderOpenApi } from "./document.js";
export { HealthSchema, HTTP_ROUTES, OpenApiDocumentSchema, ReadinessSchema, type RouteDescription } from "./routes.js";

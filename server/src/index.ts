export { type BuildOptions, buildApp } from "./app.js";
export { type Config, parseConfig } from "./config.js";
export { type PreparedDatabase, prepareDatabase } from "./database.js";
export { type Access, accessControl, accessOf, ROUTE_ACCESS } from "./plugins/access.js";
export { exitOnSignals, type RunningServer, runServer, type SignalExit } from "./run.js";

import { z } from "zod";
import {
  ConsoleCallListSchema,
  ConsoleCallsQuerySchema,
  ConsoleHostListSchema,
  ConsoleListQuerySchema,
  ConsoleProcessListSchema,
  ConsoleSessionListSchema,
  ConsoleSessionsQuerySchema,
} from "../console.js";
import { ALWAYS, OPERATOR, type RouteDescription } from "./route-kit.js";

const ConsoleSessionList = ConsoleSessionListSchema.meta({ id: "ConsoleSessionList" });
const ConsoleCallList = ConsoleCallListSchema.meta({ id: "ConsoleCallList" });
const ConsoleHostList = ConsoleHostListSchema.meta({ id: "ConsoleHostList" });
const ConsoleProcessList = ConsoleProcessListSchema.meta({ id: "ConsoleProcessList" });

/** The journal console: its static files (public: they hold no data) and its operator-only reads. */
export const CONSOLE_ROUTES: Readonly<Record<string, RouteDescription>> = {
  "GET /console": {
    summary: "The journal console (redirect)",
    description: "Redirects (308) to /console/.",
    auth: "none",
    responses: { 308: { description: "To /console/." } },
    errors: ALWAYS,
  },
  "GET /console/": {
    summary: "The journal console",
    description: "The console's page; it asks for the operator token and reads the routes below with it.",
    auth: "none",
    responses: { 200: { description: "The page.", schema: z.string(), contentType: "text/html" } },
    errors: ALWAYS,
  },
  "GET /console/:file": {
    summary: "A file of the journal console",
    description: "Only the files of the console's own directory; any other name is not_found.",
    auth: "none",
    params: z.strictObject({ file: z.string() }),
    responses: {
      200: { description: "The file (script, style sheet or image).", schema: z.string(), contentType: "text/plain" },
    },
    errors: ["not_found", ...ALWAYS],
  },
  "GET /v1/console/sessions": {
    summary: "Sessions of every application (console)",
    description: "Newest first, filtered by status, tool and creation time.",
    auth: "operator",
    query: ConsoleSessionsQuerySchema,
    responses: { 200: { description: "The sessions.", schema: ConsoleSessionList } },
    errors: [...OPERATOR, "invalid_request"],
  },
  "GET /v1/console/calls": {
    summary: "Tool calls of every session (console)",
    description: "open=true: the calls not ended, oldest first; else the latest.",
    auth: "operator",
    query: ConsoleCallsQuerySchema,
    responses: { 200: { description: "The calls.", schema: ConsoleCallList } },
    errors: [...OPERATOR, "invalid_request"],
  },
  "GET /v1/console/hosts": {
    summary: "Hosts and their connections (console)",
    auth: "operator",
    query: ConsoleListQuerySchema,
    responses: { 200: { description: "The hosts.", schema: ConsoleHostList } },
    errors: [...OPERATOR, "invalid_request"],
  },
  "GET /v1/console/processes": {
    summary: "Servers and workers (console)",
    auth: "operator",
    query: ConsoleListQuerySchema,
    responses: { 200: { description: "The processes.", schema: ConsoleProcessList } },
    errors: [...OPERATOR, "invalid_request"],
  },
};

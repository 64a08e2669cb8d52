/**
 * Tools an application serves over HTTP (a host placement with `url`): the Application tool
 * extension (protocol "tool", the default) or the v1 plain-JSON convention of `http()` /
 * `httpTool()` (protocol "json").
 */
import { setupFailed } from "../call-reporter.js";
import type { DriverCall } from "./driver.js";
import { runJsonToolCall } from "./http-json-tool.js";
import { runToolInvocation } from "./http-tool-invocation.js";

export async function runHttpApplicationCall(call: DriverCall): Promise<void> {
  const env = call.placement.env;
  if (env.type !== "host" || !env.url) {
    await call.reporter.failWith(setupFailed(`tool ${call.claimed.tool}: it is not served over HTTP`));
    return;
  }
  if (env.protocol === "json") await runJsonToolCall(call, env.url);
  else await runToolInvocation(call, env.url);
}

// A chaos host process: an application serving host tools over the SDK. On its first start it
// creates its sessions and saves the host credentials and session ids; when restarted after a
// SIGKILL it reattaches to the same sessions with them (docs/tools.md).
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { Brain } from "@aexhq/brain";
import type { ScriptStep } from "@aexhq/brain-contracts";
import { hostTools } from "./host-tools.js";

export interface HostSpec {
  url: string;
  token: string;
  targetUrl: string;
  scripts: ScriptStep[][];
  stateFile: string;
  recordFile: string;
}

const spec = JSON.parse(readFileSync(process.env.CHAOS_HOST_SPEC ?? "", "utf8")) as HostSpec;
const tools = hostTools(spec.recordFile, spec.targetUrl);
let sessions: string[];
if (existsSync(spec.stateFile)) {
  const state = JSON.parse(readFileSync(spec.stateFile, "utf8"));
  const brain = new Brain({ url: spec.url, token: spec.token, credentials: state.credentials });
  sessions = state.sessions;
  for (const id of sessions) await brain.sessions.get(id, { tools: tools() });
} else {
  const brain = new Brain({ url: spec.url, token: spec.token });
  sessions = [];
  for (const script of spec.scripts) {
    const session = await brain.sessions.create({ model: { provider: "scripted", script }, tools: tools() });
    sessions.push(session.id);
  }
  writeFileSync(spec.stateFile, JSON.stringify({ credentials: brain.credentials(), sessions }), { mode: 0o600 });
}
console.log(`chaos host ready ${JSON.stringify(sessions)}`);
// The SDK's socket keeps the process alive; it runs until killed.

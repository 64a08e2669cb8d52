import type { ScriptStep } from "@aexhq/brain";

/** A scripted model: step N answers model call N. */
export function scripted(...steps: ScriptStep[]) {
  return { provider: "scripted" as const, script: steps };
}

/** Posts a user message without waiting for its turn (whose tools may never finish). */
export async function postMessage(
  base: { url: string; token: string },
  sessionId: string,
  text: string,
): Promise<number> {
  const res = await fetch(`${base.url}/v1/sessions/${sessionId}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${base.token}`, "content-type": "application/json" },
    body: JSON.stringify({ text }),
  });
  if (res.status !== 201) throw new Error(`POST messages: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { sequence: number }).sequence;
}

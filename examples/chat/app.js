// A chat front end on a Brain session, built on the AI SDK's useChat: the transport posts to the
// session's chat route, and `resume: true` asks for the running turn again after a reload (or a
// server fail-over). The conversation so far is read from the session's journal.
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import { createElement as h, useState } from "react";
import { createRoot } from "react-dom/client";

const sessionId = new URLSearchParams(location.search).get("session");
const base = `/v1/sessions/${encodeURIComponent(sessionId)}`;

/** Earlier turns from the journal: each user message, and the text its turn completed with. */
async function history() {
  const res = await fetch(`${base}/events`);
  if (!res.ok) throw new Error(`the journal answered ${res.status}`);
  const messages = [];
  for (const line of (await res.text()).split("\n")) {
    if (!line) continue;
    const { sequence, kind, payload } = JSON.parse(line);
    if (kind === "user_message") {
      messages.push({ id: `user-${sequence}`, role: "user", parts: [{ type: "text", text: payload.text }] });
    } else if (kind === "activation_ended" && payload.message !== null && payload.status === "completed") {
      const id = `brain-${sessionId}-${payload.message}`;
      messages.push({ id, role: "assistant", parts: [{ type: "text", text: payload.text }] });
    }
  }
  return messages;
}

function Part({ part }) {
  if (part.type === "text") return h("span", null, part.text);
  if (part.type === "dynamic-tool") {
    const output = part.state === "output-available" ? ` → ${JSON.stringify(part.output)}` : "";
    return h("div", { className: "tool" }, `${part.toolName}(${JSON.stringify(part.input)})${output}`);
  }
  return null;
}

function Chat({ initial }) {
  const [input, setInput] = useState("");
  const { messages, sendMessage, status, error } = useChat({
    id: sessionId,
    messages: initial,
    resume: true,
    transport: new DefaultChatTransport({
      api: `${base}/chat`,
      prepareReconnectToStreamRequest: () => ({ api: `${base}/chat/stream` }),
    }),
  });
  const send = (event) => {
    event.preventDefault();
    if (input.trim() === "") return;
    sendMessage({ text: input });
    setInput("");
  };
  return h(
    "main",
    { "data-status": status },
    messages.map((m) =>
      h(
        "div",
        { key: m.id, className: "message", "data-role": m.role },
        m.parts.map((part, i) => h(Part, { key: i, part })),
      ),
    ),
    error ? h("p", { role: "alert" }, error.message) : null,
    h(
      "form",
      { onSubmit: send },
      h("input", { name: "text", value: input, onChange: (e) => setInput(e.target.value), placeholder: "Ask…" }),
      h("button", { type: "submit", disabled: status !== "ready" && status !== "error" }, "Send"),
    ),
  );
}

history().then(
  (initial) => createRoot(document.getElementById("root")).render(h(Chat, { initial })),
  (err) => {
    document.getElementById("root").textContent = `Could not read the session: ${err.message}`;
  },
);

// npm run example -- chat: a useChat front end on Brain sessions, at http://127.0.0.1:3000/new
// (PORT to change it). With OPENAI_API_KEY, gpt-4.1-mini answers and its text streams live;
// without, a scripted model answers. Reload mid-answer: the stream resumes where it was.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildChatApp, startChatApp } from "./server.mjs";

const brain = { url: process.env.BRAIN_URL ?? "http://127.0.0.1:8080", token: process.env.BRAIN_TOKEN ?? "" };
const key = process.env.OPENAI_API_KEY;
const model = key
  ? { provider: "openai", name: "gpt-4.1-mini", apiKey: key }
  : { provider: "scripted", script: [{ text: "Hello from a Brain session." }, { text: "Still here." }] };
const dist = join(fileURLToPath(new URL(".", import.meta.url)), "dist");
await buildChatApp(dist);
const app = await startChatApp({ brain, model, dist, port: Number(process.env.PORT ?? 3000) });
console.log(`chat example: ${app.url}/new`);

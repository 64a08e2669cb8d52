// The console's entry: asks for the operator token, then shows the view the address names:
// #/sessions (with its filter), #/sessions/<id> (a timeline), #/calls, #/hosts.
import { ApiError, getJson, token, whenUnauthorized } from "./api.js";
import { mountCalls } from "./calls.js";
import { replace } from "./dom.js";
import { mountHosts } from "./hosts.js";
import { mountSessions } from "./sessions.js";
import { mountTimeline } from "./timeline.js";

const form = /** @type {HTMLFormElement} */ (document.getElementById("token-form"));
const input = /** @type {HTMLInputElement} */ (document.getElementById("token"));
const formError = /** @type {HTMLElement} */ (document.getElementById("token-error"));
const nav = /** @type {HTMLElement} */ (document.getElementById("nav"));
const forget = /** @type {HTMLButtonElement} */ (document.getElementById("forget-token"));
const view = /** @type {HTMLElement} */ (document.getElementById("view"));

/** Stops the current view (its stream or refresh loop). */
let unmount = () => {};

function route() {
  unmount();
  unmount = () => {};
  if (!token.get()) return askForToken("");
  const [path, query = ""] = location.hash.replace(/^#/, "").split("?");
  const params = new URLSearchParams(query);
  const parts = (path || "/sessions").split("/").filter(Boolean);
  for (const link of nav.querySelectorAll("a")) link.classList.toggle("current", link.dataset.view === parts[0]);
  if (parts[0] === "sessions" && parts[1]) unmount = mountTimeline(view, decodeURIComponent(parts[1]));
  else if (parts[0] === "calls") unmount = mountCalls(view, params);
  else if (parts[0] === "hosts") unmount = mountHosts(view);
  else unmount = mountSessions(view, params);
}

function askForToken(message) {
  unmount();
  unmount = () => {};
  replace(view);
  nav.hidden = true;
  forget.hidden = true;
  form.hidden = false;
  formError.textContent = message;
  input.focus();
}

function signedIn() {
  form.hidden = true;
  nav.hidden = false;
  forget.hidden = false;
  route();
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const value = input.value.trim();
  if (!value) return;
  token.set(value);
  formError.textContent = "";
  try {
    // Any operator route will do: it tells a wrong token (401) from an application's (403).
    await getJson("/v1/console/processes?limit=1");
    input.value = "";
    signedIn();
  } catch (error) {
    token.clear();
    const refused = error instanceof ApiError && error.status === 403;
    formError.textContent = refused
      ? "That is an application token: the console needs the operator token."
      : error instanceof ApiError && error.status === 401
        ? "The server refused this token."
        : `Could not reach the server: ${error instanceof Error ? error.message : String(error)}`;
  }
});

forget.addEventListener("click", () => {
  token.clear();
  askForToken("");
});

whenUnauthorized(() => {
  token.clear();
  askForToken("The server refused the token (revoked or changed?): enter it again.");
});

window.addEventListener("hashchange", route);
if (token.get()) signedIn();
else askForToken("");

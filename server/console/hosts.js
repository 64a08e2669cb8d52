// Application hosts (GET /v1/console/hosts) and Brain's own processes, servers and workers
// (GET /v1/console/processes), refreshed every few seconds.
import { getJson } from "./api.js";
import { badge, dateTime, duration, h, replace, shortId } from "./dom.js";
import { errorRow, refreshEvery, table } from "./tables.js";

/** @param {HTMLElement} view */
export function mountHosts(view) {
  const hostRows = h("tbody", {});
  const processRows = h("tbody", {});
  replace(
    view,
    h("h1", {}, "Hosts"),
    table(
      "hosts",
      ["Host", "Name", "Kind", "Application", "Connections", "Replicas", "Pending", "Running", "Last connected"],
      hostRows,
    ),
    h("h1", {}, "Servers and workers"),
    table(
      "processes",
      ["Process", "Kind", "State", "Heartbeat", "Connections", "Running calls", "Started", "URL"],
      processRows,
    ),
  );
  return refreshEvery(3000, async (signal) => {
    const [hosts, processes] = await Promise.allSettled([
      getJson("/v1/console/hosts", signal),
      getJson("/v1/console/processes", signal),
    ]);
    if (signal.aborted) return;
    if (hosts.status === "rejected") replace(hostRows, errorRow(hosts.reason, 9));
    else
      replace(
        hostRows,
        hosts.value.hosts.length === 0
          ? h("tr", { class: "empty" }, h("td", { colspan: 9 }, "No hosts registered."))
          : hosts.value.hosts.map((x) =>
              h(
                "tr",
                { dataset: { hostId: x.id } },
                h("td", {}, shortId(x.id)),
                h("td", {}, x.name ?? "—"),
                h("td", {}, x.named ? "named" : "host"),
                h("td", {}, x.application ?? "operator"),
                h("td", { class: "num" }, x.connections > 0 ? badge(String(x.connections), "live") : "0"),
                h("td", { class: "num" }, String(x.replicas)),
                h("td", { class: "num" }, String(x.pendingCalls)),
                h("td", { class: "num" }, String(x.runningCalls)),
                h("td", {}, dateTime(x.lastConnectedAt)),
              ),
            ),
      );
    if (processes.status === "rejected") replace(processRows, errorRow(processes.reason, 8));
    else
      replace(
        processRows,
        processes.value.processes.map((p) =>
          h(
            "tr",
            { dataset: { processId: p.id, kind: p.kind } },
            h("td", {}, shortId(p.id)),
            h("td", {}, p.kind),
            h("td", {}, badge(p.state, p.state)),
            h(
              "td",
              {},
              p.state === "stopped" ? `stopped ${dateTime(p.stoppedAt)}` : `${duration(p.heartbeatAgeMs)} ago`,
            ),
            h("td", { class: "num" }, String(p.connections)),
            h("td", { class: "num" }, String(p.runningCalls)),
            h("td", {}, dateTime(p.startedAt)),
            h("td", {}, p.url ?? ""),
          ),
        ),
      );
  });
}

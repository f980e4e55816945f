// The job browser: one page shell (index.html) for every /ui/ path, filled
// from salttap's own JSON API (/ui/api/...). Every value from the engine
// goes into the page as text (textContent, attribute values, encoded URL
// parts), never as markup: a job's arguments or a minion's output cannot
// inject anything. No framework, no build step, nothing from elsewhere.
"use strict";

(function () {
  const main = () => document.getElementById("main");

  // el("td", {class: "num"}, "text", childNode, ...): text children are text nodes.
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === undefined || value === null || value === false) continue;
      node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === undefined || child === null) continue;
      node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // A part a page may leave out (no note, no error) is passed as null: it
  // is dropped here, where replaceChildren would print it as the text "null".
  function show(...nodes) {
    const m = main();
    m.replaceChildren(...nodes.filter((n) => n !== null && n !== undefined && n !== false));
  }

  const dash = (v) => (v === undefined || v === null || v === "" ? "-" : String(v));
  // "2026-11-29T19:25:35.529749Z" -> "2026-11-29 19:25:35"
  const time = (iso) => (typeof iso === "string" && iso.length >= 19 ? iso.slice(0, 10) + " " + iso.slice(11, 19) : dash(iso));
  const jobLink = (jid) => el("a", { href: "/ui/job/" + encodeURIComponent(jid), class: "mono jid" }, dash(jid));
  const minionLink = (id) => el("a", { href: "/ui/minion/" + encodeURIComponent(id), class: "minion" }, dash(id));
  const status = (s) => el("span", { class: "status status-" + (/^[a-z]+$/.test(s || "") ? s : "unknown") }, dash(s));
  const risk = (r) => el("span", { class: /^[a-z]+$/.test(r || "") ? "risk-" + r : "" }, dash(r));
  const num = (n, cls) => el("td", { class: "num" + (cls ? " " + cls : "") }, dash(n));

  function table(id, headers, rows) {
    return el("table", { id: id },
      el("thead", {}, el("tr", {}, headers.map((h) => (h.startsWith("#") ? el("th", { class: "num" }, h.slice(1)) : el("th", {}, h))))),
      el("tbody", {}, rows));
  }

  async function api(path) {
    // From the origin, not relative: a page opened as http://user:pw@host/ resolves relative
    // URLs with the credentials in them, which fetch() refuses; the browser sends the
    // credentials it was given for the page anyway.
    const response = await fetch(location.origin + path, { headers: { Accept: "application/json" }, credentials: "same-origin" });
    let body = null;
    try {
      body = await response.json();
    } catch (e) {
      throw new Error("salttap answered " + response.status + " without JSON");
    }
    if (!response.ok) throw new Error((body && body.error) || "salttap answered " + response.status);
    return body;
  }

  function failure(error) {
    return el("p", { class: "error", id: "error" }, String(error.message || error));
  }

  // A page's answer from `path`, with "Loading…" under the page's `head` (its
  // title and form) meanwhile; if it fails, the error there instead, and null.
  async function load(path, ...head) {
    show(...head, el("p", { class: "loading" }, "Loading…"));
    try {
      return await api(path);
    } catch (e) {
      show(...head, failure(e));
      return null;
    }
  }

  const withQuery = (path, query) => path + (query.toString() ? "?" + query.toString() : "");

  function note(body) {
    return body && body.note ? el("p", { class: "note", id: "note" }, body.note) : null;
  }

  function activate(id) {
    for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.id === id);
  }

  // ---- jobs ----------------------------------------------------------------

  const JOB_FILTERS = ["status", "fun", "minion", "user", "tgt", "risk", "since", "until", "limit"];

  function jobFilters(params) {
    const input = (name, label, placeholder) =>
      el("label", {}, label, el("input", { name: name, id: "filter-" + name, value: params.get(name) || "", placeholder: placeholder }));
    const select = (name, label, options) =>
      el("label", {}, label,
        el("select", { name: name, id: "filter-" + name },
          options.map((o) => el("option", { value: o, selected: (params.get(name) || "") === o }, o === "" ? "any" : o))));
    return el("form", { class: "filters", method: "get", action: "/ui/", id: "filters" },
      select("status", "status", ["", "succeeded", "failed", "missing", "running"]),
      input("fun", "function", "state.*"),
      input("minion", "minion", "web*"),
      input("user", "user", "root"),
      input("tgt", "target", "*"),
      select("risk", "risk at least", ["", "low", "medium", "high", "critical"]),
      input("since", "since", "1d, 2h, 2026-11-29"),
      input("until", "until", ""),
      input("limit", "limit", "100"),
      el("button", { type: "submit", id: "filter-apply" }, "Filter"),
      el("a", { href: "/ui/" }, "clear"));
  }

  async function jobsPage() {
    activate("nav-jobs");
    document.title = "Jobs - salttap";
    const params = new URLSearchParams(location.search);
    const query = new URLSearchParams();
    for (const name of JOB_FILTERS) if (params.get(name)) query.set(name, params.get(name));
    const form = jobFilters(params);
    // Empty fields stay out of the address.
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const next = new URLSearchParams();
      for (const [name, value] of new FormData(form)) if (value) next.set(name, value);
      location.assign(withQuery("/ui/", next));
    });
    const body = await load(withQuery("/ui/api/jobs", query), el("h1", {}, "Jobs"), form);
    if (!body) return;
    const rows = body.jobs.map((j) =>
      el("tr", { class: "job-row", "data-jid": j.jid, "data-status": j.status },
        el("td", { class: "mono" }, time(j.started_at)),
        el("td", {}, jobLink(j.jid)),
        el("td", {}, status(j.status)),
        el("td", { class: "mono fun" }, dash(j.fun)),
        el("td", { class: "mono" }, dash(j.tgt)),
        el("td", {}, dash(j.user)),
        num(j.succeeded + "/" + Math.max(j.expected, j.returned)),
        num(j.failed, j.failed > 0 ? "bad" : ""),
        num(j.missing, j.missing > 0 ? "warn" : ""),
        el("td", {}, risk(j.risk)),
        el("td", {}, (j.seen_by || []).join(", ") || "-")));
    show(el("h1", {}, "Jobs"), form, note(body),
      el("p", { class: "count", id: "job-count" }, body.jobs.length + (body.jobs.length === body.limit ? "+" : "") + " jobs, newest first"),
      table("jobs", ["Started (UTC)", "JID", "Status", "Function", "Target", "User", "#OK", "#Failed", "#Missing", "Risk", "Masters"], rows));
  }

  // ---- one job -------------------------------------------------------------

  async function jobPage(jid) {
    activate("nav-jobs");
    document.title = "Job " + jid + " - salttap";
    const body = await load("/ui/api/jobs/" + encodeURIComponent(jid), el("h1", {}, "Job ", el("span", { class: "mono" }, jid)));
    if (!body) return;
    const j = body.job;
    const fact = (name, ...value) => [el("dt", {}, name), el("dd", {}, ...value)];
    const states = j.states || {};
    const facts = el("dl", { class: "facts", id: "job-facts" },
      fact("status", status(j.status)),
      fact("function", el("span", { class: "mono" }, dash(j.fun) + (j.args_text ? " " + j.args_text : ""))),
      fact("target", el("span", { class: "mono" }, dash(j.tgt)), j.tgt_type ? " (" + j.tgt_type + ")" : ""),
      fact("user", dash(j.user)),
      fact("kind", dash(j.kind)),
      fact("started", time(j.started_at) + " UTC"),
      fact("settled", j.settled_at ? time(j.settled_at) + " UTC" : "-"),
      fact("minions", j.succeeded + "/" + Math.max(j.expected, j.returned) + " ok, " + j.failed + " failed, " + j.missing + " missing"),
      states.total ? fact("states", states.succeeded + " ok, " + states.failed + " failed, " + states.changed + " changed of " + states.total) : [],
      fact("risk", risk(j.risk), Array.isArray(j.reasons) && j.reasons.length ? " (" + j.reasons.join(", ") + ")" : ""),
      j.reason ? fact("reason", j.reason) : [],
      j.rerun_of ? fact("re-run of", jobLink(j.rerun_of)) : [],
      fact("seen by", (j.seen_by || []).join(", ") || "-"),
      fact("publisher", dash(j.publisher)),
      body.jobs_with_this_jid > 1 ? fact("same jid", body.jobs_with_this_jid + " different jobs have this jid; showing the newest (salttap jobs show lists them all)") : []);
    const returns = body.returns.map((r) => {
      const stateIds = r.failed_states.length ? r.failed_states.map((s) => s.id) : r.failed_state_ids;
      const detail = el("td", { class: "detail" },
        stateIds.length ? el("div", { class: "bad" }, "failed states: " + stateIds.join(", ")) : null,
        r.reason ? el("div", { class: "reason" }, r.reason) : null,
        r.return_text ? el("details", {}, el("summary", {}, "return" + (r.return_truncated ? " (cut)" : "")), el("pre", { class: "return-text" }, r.return_text)) : null);
      return el("tr", { class: "return-row", "data-minion": r.minion, "data-status": r.status },
        el("td", {}, minionLink(r.minion)),
        el("td", {}, status(r.status)),
        num(r.retcode),
        el("td", {}, (r.seen_by || []).join(", ") || "-"),
        detail);
    });
    const more = body.returns_total > body.returns.length
      ? el("p", { class: "note" }, body.returns.length + " of " + body.returns_total + " returns shown") : null;
    const failed = j.failed_states.map((s) =>
      el("tr", { class: "failed-state-row" },
        el("td", {}, minionLink(s.minion)),
        el("td", { class: "mono bad" }, dash(s.id)),
        el("td", { class: "mono" }, dash(s.function)),
        el("td", {}, el("pre", {}, dash(s.comment)))));
    show(el("h1", {}, "Job ", el("span", { class: "mono", id: "job-jid" }, j.jid)), facts,
      el("h2", {}, "Minions"), more,
      table("returns", ["Minion", "Status", "#Retcode", "Seen by", "Reason, failed states, return"], returns),
      failed.length ? el("h2", {}, "Failed states") : null,
      failed.length ? table("failed-states", ["Minion", "State", "Function", "Comment"], failed) : null);
  }

  // ---- minions -------------------------------------------------------------

  const percent = (rate) => (Math.round(rate * 1000) / 10).toFixed(1) + "%";

  function sinceForm(action, params, extra) {
    return el("form", { class: "filters", method: "get", action: action, id: "filters" },
      extra || null,
      el("label", {}, "since", el("input", { name: "since", id: "filter-since", value: params.get("since") || "", placeholder: "7d (all: everything)" })),
      el("button", { type: "submit", id: "filter-apply" }, "Show"));
  }

  async function minionsPage() {
    activate("nav-minions");
    document.title = "Minions - salttap";
    const params = new URLSearchParams(location.search);
    const since = params.get("since") || "";
    const form = sinceForm("/ui/minions", params);
    const body = await load("/ui/api/minions" + (since ? "?since=" + encodeURIComponent(since) : ""), el("h1", {}, "Minions"), form);
    if (!body) return;
    const rows = body.minions.map((m) =>
      el("tr", { class: "minion-row", "data-minion": m.minion },
        el("td", {}, minionLink(m.minion)),
        num(m.jobs), num(m.succeeded), num(m.failed, m.failed ? "bad" : ""), num(m.missing, m.missing ? "warn" : ""),
        el("td", { class: "num" }, percent(m.failure_rate)),
        el("td", {}, el("meter", { min: 0, max: 1, value: m.failure_rate, low: 0.05, high: 0.2, optimum: 0 })),
        el("td", { class: "mono" }, time(m.last_seen))));
    show(el("h1", {}, "Minions"), form, note(body),
      el("p", { class: "count" }, body.minions.length + " minions, flaky first (returns of jobs since " + (since || "7d") + ")"),
      table("minions", ["Minion", "#Jobs", "#Succeeded", "#Failed", "#Missing", "#Failure rate", "", "Last seen (UTC)"], rows));
  }

  async function minionPage(id) {
    activate("nav-minions");
    document.title = "Minion " + id + " - salttap";
    const params = new URLSearchParams(location.search);
    const since = params.get("since") || "";
    const action = "/ui/minion/" + encodeURIComponent(id);
    const form = sinceForm(action, params);
    const title = () => el("h1", {}, "Minion ", el("span", { class: "mono", id: "minion-id" }, id));
    const body = await load("/ui/api/minions/" + encodeURIComponent(id) + (since ? "?since=" + encodeURIComponent(since) : ""), title(), form);
    if (!body) return;
    const m = body.minion || { jobs: 0, succeeded: 0, failed: 0, missing: 0, failure_rate: 0, last_seen: "" };
    const card = (label, value, id) => el("div", { class: "card", id: id }, el("div", { class: "value" }, value), el("div", { class: "label" }, label));
    const cards = el("div", { class: "cards", id: "minion-stats" },
      card("jobs", m.jobs, "stat-jobs"), card("succeeded", m.succeeded, "stat-succeeded"),
      card("failed", m.failed, "stat-failed"), card("missing", m.missing, "stat-missing"),
      card("failure rate", percent(m.failure_rate), "stat-failure-rate"), card("last seen (UTC)", time(m.last_seen), "stat-last-seen"));
    const rows = body.returns.map((r) =>
      el("tr", { class: "minion-return-row", "data-jid": r.jid, "data-status": r.status },
        el("td", { class: "mono" }, time(r.job_started_at)),
        el("td", {}, jobLink(r.jid)),
        el("td", { class: "mono" }, dash(r.fun)),
        el("td", {}, status(r.status)),
        num(r.retcode),
        el("td", {}, r.failed_state_ids.length ? el("span", { class: "bad" }, "failed states: " + r.failed_state_ids.join(", ")) : dash(r.reason))));
    show(title(), form, note(body), cards, el("h2", {}, "History"),
      table("minion-returns", ["Job started (UTC)", "JID", "Function", "Status", "#Retcode", "Reason or failed states"], rows));
  }

  // ---- alerts --------------------------------------------------------------

  async function alertsPage() {
    activate("nav-alerts");
    document.title = "Alerts - salttap";
    const params = new URLSearchParams(location.search);
    const query = new URLSearchParams();
    for (const name of ["kind", "since", "limit"]) if (params.get(name)) query.set(name, params.get(name));
    const kind = el("label", {}, "kind",
      el("select", { name: "kind", id: "filter-kind" },
        ["", "failed", "missing", "risky"].map((o) => el("option", { value: o, selected: (params.get("kind") || "") === o }, o === "" ? "any" : o))));
    const form = sinceForm("/ui/alerts", params, kind);
    const body = await load(withQuery("/ui/api/alerts", query), el("h1", {}, "Alerts"), form);
    if (!body) return;
    const list = (names) => (Array.isArray(names) && names.length ? names.join(", ") : "-");
    const rows = body.alerts.map((a) =>
      el("tr", { class: "alert-row", "data-jid": a.jid },
        el("td", { class: "mono" }, time(a["@timestamp"])),
        el("td", {}, Array.isArray(a.kinds) ? a.kinds.join(", ") : dash(a.alert)),
        el("td", {}, jobLink(a.jid)),
        el("td", { class: "mono" }, dash(a.fun)),
        el("td", {}, dash(a.user)),
        el("td", {}, status(a.status)),
        el("td", { class: "bad" }, list(a.failed)),
        el("td", { class: "warn" }, list(a.missing)),
        el("td", {}, risk(a.risk))));
    show(el("h1", {}, "Alerts"), form, note(body),
      el("p", { class: "count" }, body.alerts.length + " alerts, newest first"),
      table("alerts", ["Raised (UTC)", "Kinds", "JID", "Function", "User", "Status", "Failed", "Missing", "Risk"], rows));
  }

  // ---- routing -------------------------------------------------------------

  function route() {
    const path = location.pathname;
    const one = (prefix) => decodeURIComponent(path.slice(prefix.length));
    if (path.startsWith("/ui/job/")) return jobPage(one("/ui/job/"));
    if (path.startsWith("/ui/minion/")) return minionPage(one("/ui/minion/"));
    if (path === "/ui/minions") return minionsPage();
    if (path === "/ui/alerts") return alertsPage();
    return jobsPage();
  }

  document.addEventListener("DOMContentLoaded", () => {
    route().catch((e) => show(failure(e)));
  });
})();

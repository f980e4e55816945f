"""The job browser (`salttap ui`) in a real headless Chromium, against a real OpenSearch 2.19
node loaded with every capture of both Salt releases through `salttap replay --ship`.

What each page must show is read from the engine itself (the job, return and alert documents
replay shipped), with plain queries, and compared with what the browser renders: the jobs
appear, filters narrow the list, a failed job's page shows its failed states and every minion's
status, the minion and alerts pages render, markup in a document is shown as text and never
run, and basic auth turns away a browser without credentials.

Needs Debian's `chromium` and `chromium-driver` and the `selenium` package (scripts/install-deps).
salttap binary: $SALTTAP_BIN, else $SALTTAP_BUILD_DIR/salttap, else build/dev/salttap (binaries.py).

Run: .cache/venv/tools/bin/python -m pytest tests/engines/test_ui_browser.py -v
"""
from __future__ import annotations

import base64
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from http_calls import call
from indexed import replay_config, ship
from salttap_process import stop_child

PREFIX = "uib"
WAIT = 30  # seconds a page may take to fill (it takes milliseconds)
USER, PASSWORD = "viewer", "correct horse battery staple"
XSS_JID = "20270101000000000001"
XSS_FUN = "<img src=x onerror=\"window.__xss=1\">"
XSS_USER = "<script>window.__xss=1</script>"


def write_config(path: Path, url: str, spool: Path, auth: bool = False) -> Path:
    replay_config(path, url, spool, PREFIX)
    if auth:
        (path.parent / "ui-password").write_text(PASSWORD + "\n")
        with open(path, "a") as f:
            f.write(f"ui: {{username: {USER}, password_file: {path.parent / 'ui-password'}}}\n")
    return path


def search(url: str, kind: str, query: dict, size: int = 10000) -> list[dict]:
    status, got = call(f"{url}/{PREFIX}-{kind}-*/_search", "POST", {"size": size, "query": query})
    assert status == 200, got
    return [h["_source"] for h in got["hits"]["hits"]]


class UiProcess:
    """`salttap ui` on a free port of 127.0.0.1, stopped by its PID."""

    def __init__(self, salttap: Path, config: Path, log: Path):
        self.log = log
        self.out = open(log, "w")
        self.proc = subprocess.Popen([str(salttap), "ui", "--listen", "127.0.0.1:0", "--config", str(config)],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        self.url = None
        while time.monotonic() < deadline and self.proc.poll() is None:
            found = re.search(r"job browser is at (http://127\.0\.0\.1:\d+)/ui/", log.read_text())
            if found:
                self.url = found.group(1)
                break
            time.sleep(0.05)  # polling the log for the address, not waiting for an effect
        if not self.url:
            self.stop()
            raise AssertionError(f"salttap ui did not start:\n{log.read_text()[-3000:]}")

    def stop(self) -> None:
        stop_child(self.proc)
        self.out.close()


@pytest.fixture(scope="module")
def loaded(salttap, captures, opensearch, tmp_path_factory):
    """The module's OpenSearch with every capture's documents under PREFIX, plus one job whose
    function and user are markup."""
    d = tmp_path_factory.mktemp("ui-load")
    ship(salttap, captures, write_config(d / "salttap.yaml", opensearch.url, d / "spool"))
    xss = {"@timestamp": "2027-01-01T00:00:00.000001Z", "jid": XSS_JID, "kind": "job", "fun": XSS_FUN,
           "user": XSS_USER, "tgt": "*", "status": "succeeded", "started_at": "2027-01-01T00:00:00.000001Z",
           "counts": {"expected": 0, "returned": 0, "succeeded": 0, "failed": 0, "missing": 0},
           "risk": {"level": "none"}, "master": "salt-01", "salttap": {"doc": "jobs"}}
    status, got = call(f"{opensearch.url}/{PREFIX}-jobs-2027.01.01/_doc/xss?refresh=true", "PUT", xss)
    assert status in (200, 201), got
    status, _ = call(f"{opensearch.url}/{PREFIX}-*/_refresh", "POST")
    assert status == 200
    return opensearch


@pytest.fixture(scope="module")
def ui(salttap, loaded, tmp_path_factory):
    d = tmp_path_factory.mktemp("ui")
    p = UiProcess(salttap, write_config(d / "salttap.yaml", loaded.url, d / "spool"), d / "ui.log")
    yield p
    p.stop()


@pytest.fixture(scope="module")
def ui_auth(salttap, loaded, tmp_path_factory):
    d = tmp_path_factory.mktemp("ui-auth")
    p = UiProcess(salttap, write_config(d / "salttap.yaml", loaded.url, d / "spool", auth=True), d / "ui.log")
    yield p
    p.stop()


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail("chromium and chromium-driver are needed: scripts/install-deps", pytrace=False)
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-extensions", "--window-size=1400,1000"):
        options.add_argument(arg)
    b = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    yield b
    b.quit()


def rows(b, selector: str) -> list:
    return b.find_elements(By.CSS_SELECTOR, selector)


def open_and_wait(b, url: str, table_id: str) -> None:
    """Opens `url` and waits until the page filled `table_id` (or showed an error)."""
    b.get(url)
    WebDriverWait(b, WAIT).until(
        lambda d: d.find_elements(By.ID, table_id) or d.find_elements(By.ID, "error"))
    errors = b.find_elements(By.ID, "error")
    assert not errors, f"{url}: {errors[0].text}"


def jids_shown(b) -> list[str]:
    return [r.get_attribute("data-jid") for r in rows(b, "#jobs tr.job-row")]


# ---------------------------------------------------------------- jobs

def test_every_job_appears_newest_first(browser, ui, loaded):
    jobs = search(loaded.url, "jobs", {"match_all": {}})
    open_and_wait(browser, f"{ui.url}/ui/?limit=1000", "jobs")
    shown = jids_shown(browser)
    assert sorted(shown) == sorted(j["jid"] for j in jobs)
    started = {j["jid"]: j["started_at"] for j in jobs}
    assert [started[j] for j in shown] == sorted((started[j] for j in shown), reverse=True)
    assert shown[0] == XSS_JID  # the newest


def test_filters_narrow_the_list(browser, ui, loaded):
    jobs = search(loaded.url, "jobs", {"match_all": {}})
    failed = sorted(j["jid"] for j in jobs if j["status"] == "failed")
    assert failed and len(failed) < len(jobs)
    open_and_wait(browser, f"{ui.url}/ui/?limit=1000", "jobs")
    Select(browser.find_element(By.ID, "filter-status")).select_by_value("failed")
    browser.find_element(By.ID, "filter-apply").click()
    WebDriverWait(browser, WAIT).until(lambda d: "status=failed" in d.current_url and d.find_elements(By.ID, "jobs"))
    assert sorted(jids_shown(browser)) == failed
    assert {r.get_attribute("data-status") for r in rows(browser, "#jobs tr.job-row")} == {"failed"}

    # function glob and status together, typed into the form
    states = sorted(j["jid"] for j in jobs if j["status"] == "failed" and str(j.get("fun", "")).startswith("state."))
    fun = browser.find_element(By.ID, "filter-fun")
    fun.clear()
    fun.send_keys("state.*")
    browser.find_element(By.ID, "filter-apply").click()
    WebDriverWait(browser, WAIT).until(lambda d: "fun=state." in d.current_url and d.find_elements(By.ID, "jobs"))
    assert sorted(jids_shown(browser)) == states

    # a minion, and a time window that holds nothing
    minion = next(m for j in jobs for m in j.get("minions", {}).get("expected", []))
    with_minion = sorted(j["jid"] for j in jobs
                         if any(minion in j.get("minions", {}).get(k, [])
                                for k in ("expected", "succeeded", "failed", "missing", "late")))
    open_and_wait(browser, f"{ui.url}/ui/?limit=1000&minion={minion}", "jobs")
    assert sorted(jids_shown(browser)) == with_minion
    open_and_wait(browser, f"{ui.url}/ui/?until=2000-01-01", "jobs")
    assert jids_shown(browser) == []


def test_a_bad_filter_is_shown_not_run(browser, ui):
    browser.get(f"{ui.url}/ui/?since=tomorrow-ish")
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.ID, "error"))
    assert "since" in browser.find_element(By.ID, "error").text


# ---------------------------------------------------------------- one job

def test_a_failed_jobs_page_shows_its_failed_states_and_every_minion(browser, ui, loaded):
    jobs = search(loaded.url, "jobs", {"term": {"status": "failed"}})
    job = next(j for j in jobs if j.get("failed_states"))
    returns = search(loaded.url, "returns", {"bool": {"filter": [{"term": {"jid": job["jid"]}},
                                                                  {"term": {"master": job["master"]}}]}})
    open_and_wait(browser, f"{ui.url}/ui/job/{job['jid']}", "returns")
    assert browser.find_element(By.ID, "job-jid").text == job["jid"]
    shown = {r.get_attribute("data-minion"): r.get_attribute("data-status") for r in rows(browser, "#returns tr.return-row")}
    assert shown == {r["minion"]: r["status"] for r in returns}
    table = browser.find_element(By.ID, "failed-states").text
    for state in job["failed_states"]:
        assert state["id"] in table and state["minion"] in table
    facts = browser.find_element(By.ID, "job-facts").text
    assert "failed" in facts and job["fun"] in facts


def test_an_unknown_job_says_so(browser, ui):
    browser.get(f"{ui.url}/ui/job/19990101000000000000")
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.ID, "error"))
    assert "no job 19990101000000000000" in browser.find_element(By.ID, "error").text


# ---------------------------------------------------------------- minions, alerts

def test_the_minion_page_has_its_history_and_failure_rate(browser, ui, loaded):
    returns = search(loaded.url, "returns", {"match_all": {}})
    counts: dict[str, list[int]] = {}
    for r in returns:
        c = counts.setdefault(r["minion"], [0, 0])
        c[0] += 1
        c[1] += r["status"] in ("failed", "missing")
    minion = max(counts, key=lambda m: (counts[m][1], counts[m][0]))
    jobs, bad = counts[minion]
    open_and_wait(browser, f"{ui.url}/ui/minion/{minion}?since=all", "minion-returns")
    assert browser.find_element(By.ID, "minion-id").text == minion
    assert browser.find_element(By.CSS_SELECTOR, "#stat-jobs .value").text == str(jobs)
    assert browser.find_element(By.CSS_SELECTOR, "#stat-failure-rate .value").text == f"{round(bad / jobs * 1000) / 10:.1f}%"
    assert len(rows(browser, "#minion-returns tr.minion-return-row")) == min(jobs, 100)
    # from the minions list, a click leads there
    open_and_wait(browser, f"{ui.url}/ui/minions?since=all", "minions")
    assert {r.get_attribute("data-minion") for r in rows(browser, "#minions tr.minion-row")} == set(counts)
    browser.find_element(By.CSS_SELECTOR, f"#minions tr.minion-row[data-minion='{minion}'] a").click()
    WebDriverWait(browser, WAIT).until(lambda d: d.find_elements(By.ID, "minion-returns"))


def test_the_alerts_page_renders(browser, ui, loaded):
    alerts = search(loaded.url, "alerts", {"match_all": {}})
    assert alerts
    open_and_wait(browser, f"{ui.url}/ui/alerts?since=all", "alerts")
    shown = [r.get_attribute("data-jid") for r in rows(browser, "#alerts tr.alert-row")]
    assert sorted(shown) == sorted(a["jid"] for a in alerts)[:100] or len(shown) == min(len(alerts), 100)
    risky = [a["jid"] for a in alerts if "risky" in a.get("kinds", [])]
    Select(browser.find_element(By.ID, "filter-kind")).select_by_value("risky")
    since = browser.find_element(By.ID, "filter-since")
    since.clear()
    since.send_keys("all")
    browser.find_element(By.ID, "filter-apply").click()
    WebDriverWait(browser, WAIT).until(lambda d: "kind=risky" in d.current_url and d.find_elements(By.ID, "alerts"))
    assert sorted(r.get_attribute("data-jid") for r in rows(browser, "#alerts tr.alert-row")) == sorted(risky)


# ---------------------------------------------------------------- what a person reads

# Words a page shows only when a script printed a value it did not have.
NOT_FOR_PEOPLE = re.compile(r"\b(null|undefined|NaN)\b|\[object Object\]")
COUNT_LINE = re.compile(r"^(\d+)\+? (jobs|minions|alerts)\b", re.M)


def test_every_page_reads_as_a_person_should_see_it(browser, ui, loaded):
    """The visible text of each page: no value a script failed to fill in, a
    count line that counts the rows shown, and a screenshot kept for a person."""
    failed = next(j for j in search(loaded.url, "jobs", {"term": {"status": "failed"}}) if j.get("failed_states"))
    minion = search(loaded.url, "returns", {"match_all": {}})[0]["minion"]
    pages = [
        ("jobs", f"{ui.url}/ui/?limit=1000", "jobs", "#jobs tr.job-row"),
        ("job", f"{ui.url}/ui/job/{failed['jid']}", "returns", None),
        ("minions", f"{ui.url}/ui/minions?since=all", "minions", "#minions tr.minion-row"),
        ("minion", f"{ui.url}/ui/minion/{minion}?since=all", "minion-returns", None),
        ("alerts", f"{ui.url}/ui/alerts?since=all", "alerts", "#alerts tr.alert-row"),
    ]
    shots = Path(ui.log).parent / "screenshots"
    shots.mkdir(exist_ok=True)
    for name, url, table_id, row_selector in pages:
        open_and_wait(browser, url, table_id)
        text = browser.find_element(By.TAG_NAME, "body").text
        assert browser.save_screenshot(str(shots / f"{name}.png")), name
        bad = NOT_FOR_PEOPLE.search(text)
        assert bad is None, f"{name} page shows {bad.group(0)!r}: {text[max(0, bad.start() - 80):bad.end() + 80]!r}"
        if row_selector:
            counted = COUNT_LINE.search(text)
            assert counted, f"{name} page has no count line: {text[:300]!r}"
            assert int(counted.group(1)) == len(rows(browser, row_selector)), name


# ---------------------------------------------------------------- safety

def test_markup_in_a_document_is_text(browser, ui):
    open_and_wait(browser, f"{ui.url}/ui/?limit=5", "jobs")
    row = browser.find_element(By.CSS_SELECTOR, f"#jobs tr.job-row[data-jid='{XSS_JID}']")
    assert XSS_FUN in row.text and XSS_USER in row.text
    assert not browser.find_elements(By.CSS_SELECTOR, "#jobs img, #jobs script")
    open_and_wait(browser, f"{ui.url}/ui/job/{XSS_JID}", "returns")
    assert XSS_FUN in browser.find_element(By.ID, "job-facts").text
    assert browser.execute_script("return window.__xss === undefined")


def test_basic_auth_turns_away_a_browser_without_credentials(browser, ui_auth):
    for path in ("/ui/", "/ui/static/app.js", "/ui/api/jobs"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{ui_auth.url}{path}", timeout=10)
        assert refused.value.code == 401
        assert refused.value.headers["WWW-Authenticate"].startswith("Basic")
    wrong = urllib.request.Request(f"{ui_auth.url}/ui/api/jobs", headers={
        "Authorization": "Basic " + base64.b64encode(f"{USER}:guess".encode()).decode()})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(wrong, timeout=10)
    assert refused.value.code == 401
    right = urllib.request.Request(f"{ui_auth.url}/ui/api/jobs", headers={
        "Authorization": "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()})
    with urllib.request.urlopen(right, timeout=10) as answer:
        assert answer.status == 200

    # In the browser: from a page of the same origin that needs no credentials (/healthz), the
    # page, its script and the API are refused without them and answered with them. /healthz's
    # own policy (default-src 'none') forbids any fetch from it, so the page's CSP is bypassed
    # through DevTools for this check alone, and restored after.
    browser.execute_cdp_cmd("Page.setBypassCSP", {"enabled": True})
    browser.get(f"{ui_auth.url}/healthz")
    statuses = browser.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const auth = {Authorization: "Basic " + btoa(arguments[0])};
        Promise.all(["/ui/", "/ui/static/app.js", "/ui/api/jobs"].flatMap((p) => [
            fetch(p, {credentials: "omit"}).then((r) => r.status),
            fetch(p, {credentials: "omit", headers: auth}).then((r) => r.status)]))
          .then(done, (e) => done(String(e)));""", f"{USER}:{PASSWORD}")
    browser.execute_cdp_cmd("Page.setBypassCSP", {"enabled": False})
    assert statuses == [401, 200] * 3, statuses

    # With the credentials in the address, the browser keeps them for the page's own calls.
    host = ui_auth.url.removeprefix("http://")
    user, password = (urllib.parse.quote(x, safe="") for x in (USER, PASSWORD))
    open_and_wait(browser, f"http://{user}:{password}@{host}/ui/?limit=5", "jobs")
    assert len(jids_shown(browser)) == 5

    # The metrics count the refusals, and the page answers.
    with urllib.request.urlopen(f"{ui_auth.url}/metrics", timeout=10) as answer:
        metrics = answer.read().decode()
    refused_count = re.search(r'salttap_ui_requests_total\{route="page",status="401"\} (\d+)', metrics)
    assert refused_count and int(refused_count.group(1)) >= 2, metrics[:2000]

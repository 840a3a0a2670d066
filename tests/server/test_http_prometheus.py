#!/usr/bin/python3
"""test_http_prometheus.py - physd's /metrics (server/http_metrics.c) as Prometheus reads it:
Debian's `prometheus` server, not our own parser.

It starts the daemon (PHYSD_BIN) in real time on configs/worlds/default.xml with --http on a
free port, then `prometheus` on another loopback port with a generated config that scrapes
physd every second, waits (at most 15 s) for a scrape to arrive, and checks through
Prometheus' HTTP API (/api/v1/query) that:
  - the target is up (up{job="physd"} == 1) and every one of the 29 samples was taken;
  - physd_step_seconds_count > 0 and equals its +Inf bucket; histogram_quantile(0.5, ...) over
    the buckets is a number in (0, 1] s;
  - physd_world_loaded == 1, physd_bodies == 7 (the default world), physd_sessions == 0.
Exit status: 0 pass, 1 fail, 77 skip (prometheus is not installed: never a pass).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import pycheck  # noqa: E402
from pycheck import check, free_port  # noqa: E402

PHYSD = os.environ.get("PHYSD_BIN", "build/server/physd")
WORLD = sys.argv[1] if len(sys.argv) > 1 else "configs/worlds/default.xml"


def query(prom_port, q):
    """The instant vector of `q`: a list of (labels, float value)."""
    url = "http://127.0.0.1:%d/api/v1/query?%s" % (prom_port, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=5) as r:
        d = json.load(r)
    if d.get("status") != "success":
        return []
    return [(x["metric"], float(x["value"][1])) for x in d["data"]["result"]]


def value(prom_port, q):
    r = query(prom_port, q)
    return r[0][1] if len(r) == 1 else None


def main():
    prom = shutil.which("prometheus")
    if not prom:
        print("SKIP: prometheus is not installed (apt-get install prometheus)")
        return 77
    tmp = tempfile.mkdtemp(prefix="physd-prom-")
    http_port, prom_port = free_port(), free_port()
    procs = []
    try:
        daemon = subprocess.Popen(
            [PHYSD, "--socket", os.path.join(tmp, "physd.sock"), "--world", WORLD,
             "--mode", "realtime", "--http", str(http_port)],
            stdout=open(os.path.join(tmp, "physd.log"), "w"), stderr=subprocess.STDOUT)
        procs.append(daemon)
        cfg = os.path.join(tmp, "prometheus.yml")
        with open(cfg, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                    "scrape_configs:\n  - job_name: physd\n    static_configs:\n"
                    "      - targets: ['127.0.0.1:%d']\n" % http_port)
        procs.append(subprocess.Popen(
            [prom, "--config.file=" + cfg, "--storage.tsdb.path=" + os.path.join(tmp, "data"),
             "--web.listen-address=127.0.0.1:%d" % prom_port, "--log.level=warn"],
            stdout=open(os.path.join(tmp, "prometheus.log"), "w"), stderr=subprocess.STDOUT))
        # wait for a scrape that carried physd's samples
        deadline = time.monotonic() + 15
        count = None
        while time.monotonic() < deadline:
            try:
                count = value(prom_port, "physd_step_seconds_count")
            except OSError:
                count = None  # prometheus still starting
            if count:
                break
            time.sleep(0.5)
        check(count is not None and count > 0, "a scrape arrived: physd_step_seconds_count = %r" % count)
        if count:
            check(value(prom_port, 'up{job="physd"}') == 1, "up{job=\"physd\"} == 1")
            # one query, so both come from the same scrape
            d = value(prom_port, 'physd_step_seconds_count - ignoring(le) '
                                 'physd_step_seconds_bucket{le="+Inf"}')
            check(d == 0, "count - +Inf bucket == 0 (got %r)" % d)
            q50 = value(prom_port, "histogram_quantile(0.5, physd_step_seconds_bucket)")
            check(q50 is not None and 0 < q50 <= 1, "histogram_quantile(0.5) = %r s" % q50)
            check(value(prom_port, "physd_world_loaded") == 1, "physd_world_loaded == 1")
            check(value(prom_port, "physd_bodies") == 7, "physd_bodies == 7")
            check(value(prom_port, "physd_sessions") == 0, "physd_sessions == 0")
            n = value(prom_port, 'scrape_samples_scraped{job="physd"}')
            check(n == 29, "29 samples a scrape (13 buckets, sum, count, 14 families): %r" % n)
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if pycheck.failures:
            for name in ("physd.log", "prometheus.log"):
                path = os.path.join(tmp, name)
                if os.path.exists(path):
                    print("---- " + name)
                    print(open(path).read()[-3000:])
        shutil.rmtree(tmp, ignore_errors=True)
    check(procs and procs[0].returncode == 0, "physd exited 0 at SIGTERM")
    return 1 if pycheck.failures else 0


if __name__ == "__main__":
    sys.exit(main())

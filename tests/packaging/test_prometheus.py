#!/usr/bin/env python3
"""The fleet path with a real Prometheus (Debian's `prometheus`): a real
`daxprobe agent` serves its reports on a socket, daxprobe-collector stores
them and serves /metrics, and Prometheus scrapes it with the alert rules of
packaging/examples loaded. Prometheus's HTTP API must then return
daxprobe_vm_verdict for the VM (the verdict the agent's own check gave),
daxprobe_build_info, the target as up and the rule group as loaded.
Many hosts are many such targets of one Prometheus; one is enough to prove
the path. Exit 77 without prometheus."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(port, path, **params):
    url = f"http://127.0.0.1:{port}/api/v1/{path}?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)["data"]
    except OSError:
        return None  # not listening yet


def wait_for(what, fn, attempts=1200):
    """Polls a condition on another process's state, bounded in attempts."""
    for _ in range(attempts):
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise SystemExit(f"FAIL: timed out waiting for {what}")


def main():
    collector, agent, rules = sys.argv[1:4]
    prom = shutil.which("prometheus")
    if not prom:
        print("SKIP: prometheus not found (apt-get install prometheus)")
        sys.exit(77)
    procs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            sock = os.path.join(tmp, "vm1.sock")
            procs.append(subprocess.Popen([agent, "agent", "--listen", sock, "--no-active"],
                                          stderr=subprocess.DEVNULL))
            want = subprocess.run([agent, "check", "--json", "--no-active"],
                                  capture_output=True, text=True)
            verdict = json.loads(want.stdout)["verdict"]["code"]
            coll = subprocess.Popen([collector, "run", "--socket", f"vm1={sock}",
                                     "--state-dir", tmp, "--metrics-listen", "127.0.0.1:0"],
                                    stderr=subprocess.PIPE, text=True)
            procs.append(coll)
            mport = None
            for line in coll.stderr:
                m = re.search(r"metrics on port (\d+)", line)
                if m:
                    mport = int(m[1])
                    break
            if not mport:
                raise SystemExit("FAIL: the collector did not say its metrics port")
            # Keep draining its log so it never blocks on a full pipe.
            subprocess.Popen(["cat"], stdin=coll.stderr, stdout=subprocess.DEVNULL)

            pport = free_port()
            cfg = os.path.join(tmp, "prometheus.yml")
            with open(cfg, "w") as f:
                f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.abspath(rules)}
scrape_configs:
  - job_name: daxprobe
    static_configs:
      - targets: ['127.0.0.1:{mport}']
""")
            procs.append(subprocess.Popen(
                [prom, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/tsdb",
                 f"--web.listen-address=127.0.0.1:{pport}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

            q = 'daxprobe_vm_verdict{job="daxprobe",vm="vm1"} == 1'
            res = wait_for("daxprobe_vm_verdict in Prometheus",
                           lambda: (api(pport, "query", query=q) or {}).get("result"))
            got = res[0]["metric"]
            print(f"Prometheus: {q} -> {got} (the agent's check says {verdict})")
            failures = []
            if got.get("verdict") != verdict:
                failures.append(f"verdict {got.get('verdict')} != the check's {verdict}")
            bi = (api(pport, "query", query="daxprobe_build_info") or {}).get("result") or []
            print(f"Prometheus: daxprobe_build_info -> {[r['metric'] for r in bi]}")
            if not bi:
                failures.append("no daxprobe_build_info in Prometheus")
            targets = (api(pport, "targets") or {}).get("activeTargets", [])
            if [t["health"] for t in targets] != ["up"]:
                failures.append(f"scrape target not up: {targets}")
            groups = (api(pport, "rules") or {}).get("groups", [])
            names = sorted(r["name"] for g in groups for r in g["rules"])
            print(f"Prometheus: rules loaded {names}")
            if "DaxprobeVerdictProblem" not in names:
                failures.append("the alert rules were not loaded")
        finally:
            for p in reversed(procs):
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=60)
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

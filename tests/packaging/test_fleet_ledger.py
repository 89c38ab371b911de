#!/usr/bin/env python3
"""The fleet memory ledger through a real Prometheus (Debian's `prometheus`),
scraping three collectors, one per simulated host, each with its own state
dir and port. Each VM is a real QEMU (paused with -S: its memory-backend-file
is mapped and its anonymous memory real, but no CPU is spent on a guest) and
a real `daxprobe agent --listen` serving a captured guest's reports. Host A
runs two VMs on one backing file (counted once), B one VM, C two VMs with
files of their own. Prometheus loads packaging/examples/daxprobe-ledger-
rules.yml; the test waits on Prometheus's own state (/-/ready, every
target's lastScrape after the collectors had their figures, the rule
group's lastEvaluation after the end of those scrapes: an evaluation
between a scrape's start and its end saw one host only), queries each fleet:* series through
/api/v1/query and compares it with the sum of what each collector's
/metrics exports. Exit 77 without prometheus or QEMU."""
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
from datetime import datetime

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")
ATTEMPTS = 1200  # hang guard for each wait (0.1 s apart): 2 minutes

HOSTS = {  # host -> [(vm, fixture, backing file)]
    "host-a": [("a1", "fsdax-ext4", "shared.img"), ("a2", "fsdax-xfs", "shared.img")],
    "host-b": [("b1", "raw-xfs", "b1.img")],
    "host-c": [("c1", "virtio-pmem", "c1.img"), ("c2", "fsdax-ext4", "c2.img")],
}
FLEET = ["daxprobe_host_vm_memory_bytes", "daxprobe_host_qemu_anon_bytes",
         "daxprobe_host_backing_files_cached_bytes", "daxprobe_host_guest_page_cache_bytes",
         "daxprobe_host_guest_dax_mount_bytes"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.read().decode()
    except OSError:
        return None  # not listening yet


def api(port, path, **params):
    text = get(f"http://127.0.0.1:{port}/api/v1/{path}?" + urllib.parse.urlencode(params))
    return json.loads(text)["data"] if text else None


def wait_for(what, fn):
    """Polls another process's state (it cannot notify us), bounded."""
    for _ in range(ATTEMPTS):
        v = fn()
        if v:
            return v
        time.sleep(0.1)
    raise SystemExit(f"FAIL: timed out waiting for {what}")


def samples(text):
    """name{labels} -> value of an exposition page."""
    out = {}
    for line in (text or "").splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def iso_seconds(stamp):
    """Prometheus's RFC 3339 times (nanoseconds, Z) as unix seconds."""
    m = re.match(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)$", stamp)
    zone = "+00:00" if m[3] == "Z" else m[3]
    return datetime.fromisoformat(m[1] + zone).timestamp() + float(m[2] or 0)


def main():
    collector, agent, rules = sys.argv[1:4]
    prom, qemu = shutil.which("prometheus"), shutil.which("qemu-system-x86_64")
    if not prom or not qemu:
        print("SKIP: prometheus or qemu-system-x86_64 not found "
              "(apt-get install prometheus qemu-system-x86)")
        sys.exit(77)
    procs, failures = [], []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            ports = {}
            for host, vms in HOSTS.items():
                hdir = os.path.join(tmp, host)
                os.mkdir(hdir)
                conf = [f"state-dir {hdir}", "metrics-listen 127.0.0.1:0",
                        "host-facts-interval 3600"]  # read once: figures stay put
                for vm, fixture, backing in vms:
                    img = os.path.join(hdir, backing)
                    if not os.path.exists(img):
                        with open(img, "wb") as f:  # written: in the host page cache
                            f.write(os.urandom(4 << 20))
                    sock, pidfile = os.path.join(hdir, vm + ".sock"), os.path.join(hdir, vm + ".pid")
                    procs.append(subprocess.Popen(
                        [qemu, "-S", "-machine", "pc,nvdimm=on", "-accel", "tcg", "-nodefaults",
                         "-display", "none", "-m", "32M,slots=2,maxmem=1G", "-pidfile", pidfile,
                         "-object", f"memory-backend-file,id=m1,share=on,readonly=on,"
                                    f"mem-path={img},size=4M",
                         "-device", "nvdimm,memdev=m1,unarmed=on"],
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL))
                    procs.append(subprocess.Popen(
                        [agent, "agent", "--listen", sock, "--root", os.path.join(FIXTURES, fixture),
                         "--no-active", "--interval", "1"],
                        stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                    wait_for(f"{vm}'s QEMU pidfile", lambda: os.path.exists(pidfile)
                             and open(pidfile).read().strip())
                    wait_for(f"{vm}'s agent socket", lambda: os.path.exists(sock))
                    conf += [f"socket {vm} {sock}", f"pidfile {vm} {pidfile}"]
                cfg = os.path.join(hdir, "collector.conf")
                with open(cfg, "w") as f:
                    f.write("\n".join(conf) + "\n")
                coll = subprocess.Popen([collector, "run", "--config", cfg],
                                        stderr=subprocess.PIPE, text=True)
                procs.append(coll)
                for line in coll.stderr:
                    m = re.search(r"metrics on port (\d+)", line)
                    if m:
                        ports[host] = int(m[1])
                        break
                if host not in ports:
                    raise SystemExit(f"FAIL: {host}'s collector did not say its metrics port")
                procs.append(subprocess.Popen(["cat"], stdin=coll.stderr,
                                              stdout=subprocess.DEVNULL))

            def complete(host):
                """The host's page once every VM has its guest and QEMU figures."""
                page = samples(get(f"http://127.0.0.1:{ports[host]}/metrics"))
                for vm, _, _ in HOSTS[host]:
                    for fam in ("daxprobe_vm_guest_page_cache_bytes", "daxprobe_vm_qemu_anon_bytes"):
                        if page.get(f'{fam}{{vm="{vm}"}}', 0) <= 0:
                            return None
                return page

            pages = {h: wait_for(f"{h}'s ledger", lambda h=h: complete(h)) for h in HOSTS}
            complete_at = time.time()
            for host, page in pages.items():
                print(f"{host}: " + ", ".join(f"{n[len('daxprobe_host_'):]}={int(page[n])}"
                                             for n in FLEET))

            # Host A: one file for two VMs, counted once.
            a = pages["host-a"]
            shared = [k for k in a if k.startswith("daxprobe_host_backing_file_vms{")]
            if len(shared) != 1 or a[shared[0]] != 2:
                failures.append(f"host-a: the shared file is not one file of 2 VMs: {shared}")
            per_vm = sum(v for k, v in a.items()
                         if k.startswith("daxprobe_vm_backing_file_cached_bytes{"))
            if per_vm <= 0 or a["daxprobe_host_backing_files_cached_bytes"] * 2 != per_vm:
                failures.append(f"host-a: files cached {a['daxprobe_host_backing_files_cached_bytes']}"
                                f" is not half of the per-VM sum {per_vm}")

            pport = free_port()
            cfg = os.path.join(tmp, "prometheus.yml")
            targets = ", ".join(f"'127.0.0.1:{p}'" for p in ports.values())
            with open(cfg, "w") as f:
                f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - {os.path.abspath(rules)}
scrape_configs:
  - job_name: daxprobe
    static_configs:
      - targets: [{targets}]
""")
            procs.append(subprocess.Popen(
                [prom, f"--config.file={cfg}", f"--storage.tsdb.path={tmp}/tsdb",
                 f"--web.listen-address=127.0.0.1:{pport}"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_for("Prometheus ready", lambda: get(f"http://127.0.0.1:{pport}/-/ready"))

            def scraped():
                ts = (api(pport, "targets") or {}).get("activeTargets", [])
                if len(ts) != len(HOSTS) or any(t["health"] != "up" for t in ts):
                    return None
                start = [iso_seconds(t["lastScrape"]) for t in ts]
                # A scrape's samples are in once it ended: its start plus its duration.
                end = [s + t["lastScrapeDuration"] for s, t in zip(start, ts)]
                return max(end) if min(start) > complete_at else None
            last_scrape = wait_for("every target scraped after the figures", scraped)

            def evaluated():
                groups = (api(pport, "rules") or {}).get("groups", [])
                g = [g for g in groups if g["name"] == "daxprobe-ledger"]
                return g and iso_seconds(g[0]["lastEvaluation"]) > last_scrape
            wait_for("the ledger rules evaluated after the scrapes", evaluated)

            for name in FLEET:
                want = sum(p[name] for p in pages.values())
                res = (api(pport, "query", query=f"fleet:{name}:sum") or {}).get("result") or []
                got = float(res[0]["value"][1]) if res else None
                print(f"Prometheus: fleet:{name}:sum = {got}; collectors' sum = {want}")
                if got != want:
                    failures.append(f"fleet:{name}:sum is {got}, the collectors export {want}")
            # The figures did not move while Prometheus read them.
            for host, page in pages.items():
                again = samples(get(f"http://127.0.0.1:{ports[host]}/metrics"))
                for name in FLEET:
                    if again.get(name) != page[name]:
                        failures.append(f"{host}: {name} moved during the test "
                                        f"({page[name]} -> {again.get(name)})")
        finally:
            for p in reversed(procs):
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

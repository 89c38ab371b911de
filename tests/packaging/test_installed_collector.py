#!/usr/bin/env python3
"""The installed daxprobe-collector package, run the way its unit runs it:
the ExecStart= line of the installed unit, verbatim, as an unprivileged user
holding only the unit's AmbientCapabilities= (what DynamicUser= gives it),
with $STATE_DIRECTORY as StateDirectory= sets it. In a private mount
namespace, /var/lib is empty, so libvirt's channel directory the unit
watches does not exist: the collector must say so, pick the directory up
when it appears, discover a VM's socket in it (a real `daxprobe agent
--listen`, root-owned like libvirt's sockets), store its report and serve
it on /metrics, build_info included.

Usage (root, after apt-get install ./daxprobe-collector_*.deb):
  test_installed_collector.py /path/to/daxprobe   (the agent binary)"""
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

UNIT = "/lib/systemd/system/daxprobe-collector.service"


def unit_values(key):
    return [m[1] for m in re.finditer(rf"^{key}=(.*)$", open(UNIT).read(), re.M)]


def line_reader(stream):
    """The collector's log lines on a queue, so a wait for one is bounded."""
    q = queue.Queue()

    def pump():
        for line in stream:
            q.put(line.rstrip())
        q.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return q


def read_until(lines, needle, seen):
    """True once a log line contains needle; False at EOF or when the
    collector says nothing for 60 s (a bound on a hang, not a wait)."""
    while True:
        try:
            line = lines.get(timeout=60)
        except queue.Empty:
            print(f"no log line for 60 s while waiting for {needle!r}")
            return False
        if line is None:
            return False
        seen.append(line)
        print("collector:", line)
        if needle in line:
            return True


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        return r.read().decode()


def inner(agent):
    failures = []
    subprocess.run(["mount", "--make-rprivate", "/"], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/var/lib"], check=True)
    state = tempfile.mkdtemp()
    os.chown(state, 65534, 65534)

    exec_start = unit_values("ExecStart")[0]
    argv = shlex.split(exec_start)
    port = int(re.search(r"--metrics-listen \S+:(\d+)", exec_start)[1])
    caps = [c.lower().removeprefix("cap_") for c in unit_values("AmbientCapabilities")[0].split()]
    capset = ",".join("+" + c for c in caps)
    print(f"ExecStart: {exec_start}\nas nobody with {caps}")
    env = dict(os.environ, STATE_DIRECTORY=state)
    coll = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         f"--inh-caps={capset}", f"--ambient-caps={capset}", f"--bounding-set=-all,{capset}",
         *argv], stderr=subprocess.PIPE, text=True, env=env)
    seen = []
    lines = line_reader(coll.stderr)
    target = "/var/lib/libvirt/qemu/channel/target"
    if not read_until(lines, "does not exist (yet)", seen):
        failures.append("the collector did not log the missing watch dir")
    domain = f"{target}/domain-1-ci"
    os.makedirs(domain, mode=0o750)
    agent_p = subprocess.Popen([agent, "agent", "--listen", f"{domain}/org.daxprobe.agent.0",
                                "--no-active"], stderr=subprocess.DEVNULL)
    try:
        if not read_until(lines, "appeared", seen):
            failures.append("the collector did not log the watch dir appearing")
        # The socket may be created after the dir: the next event picks it up.
        if not read_until(lines, "discovered ci", seen):
            failures.append("the collector did not discover the VM")
        # The report's path (connect, greeting, check, store) has no log line
        # of its own: poll /metrics for it, bounded in attempts.
        text = ""
        for _ in range(600):
            text = metrics(port)
            if re.search(r'daxprobe_vm_verdict\{vm="ci",verdict="[a-z_]+"\} 1', text):
                break
            time.sleep(0.1)
        else:
            failures.append("no verdict for VM ci on /metrics")
        for line in text.splitlines():
            if "vm=\"ci\"" in line and "verdict" in line or line.startswith("daxprobe_build_info"):
                print("metrics:", line)
        if not re.search(r'^daxprobe_build_info\{version="[^"]+",revision="[^"]*"\} 1$', text, re.M):
            failures.append("no daxprobe_build_info")
        if not os.path.exists(os.path.join(state, "collector.db")):
            failures.append("no collector.db in $STATE_DIRECTORY")
        elif os.stat(os.path.join(state, "collector.db")).st_uid != 65534:
            failures.append("collector.db is not owned by the unprivileged user")
    finally:
        agent_p.send_signal(signal.SIGTERM)
        agent_p.wait(timeout=60)
        coll.send_signal(signal.SIGTERM)
        rc = coll.wait(timeout=60)
    if rc != 0:
        failures.append(f"the collector exited {rc} on SIGTERM")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--inner":
        sys.exit(inner(sys.argv[2]))
    if os.geteuid() != 0:
        print("SKIP: needs root (a mount namespace, setpriv)")
        sys.exit(77)
    if not os.path.exists(UNIT):
        print(f"SKIP: {UNIT} not installed (apt-get install ./daxprobe-collector_*.deb)")
        sys.exit(77)
    r = subprocess.run(["unshare", "--mount", sys.executable, __file__, "--inner",
                        os.path.abspath(sys.argv[1])])
    sys.exit(r.returncode)


if __name__ == "__main__":
    main()

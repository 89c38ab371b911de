"""agent-reconnect, second half: the real collector on the agent's port while
the guest remounts without DAX, makes its namespace devdax and gives that to
the page allocator (guest/scenarios/agent-reconnect.sh: agent_changes). The
agent runs no timer then (interval an hour, re-check off): only the mount
table and the kernel's uevents can make it report, and each change must be
stored by the collector as a `change` report."""

import re
import subprocess
import tempfile
import time

from collector_scenario import CollectorProc, collector_binary


def _pmem_mount(rep):
    return next((m for m in rep.get("mounts") or [] if m.get("mount_point") == "/mnt/pmem"), None)


def _modes(rep, key, name):
    return {d.get(name): d.get("mode") for d in rep.get(key) or [] if isinstance(d, dict)}


# What the collector must have stored, each as a change report.
CHANGES = {
    "remount": lambda rep: ((_pmem_mount(rep) or {}).get("verdict") or {}).get("code")
    == "dax_not_requested",
    "namespace": lambda rep: _modes(rep, "namespaces", "dev").get("namespace0.0") == "devdax",
    "system-ram": lambda rep: _modes(rep, "dax_devices", "chardev").get("dax0.0") == "system-ram",
}


def stored_changes(reports):
    """{change: the first stored change report (its event's data) showing it}."""
    found = {}
    for r in sorted(reports, key=lambda r: r.get("seq", 0)):
        if r.get("reason") != "change":
            continue
        for name, shows in CHANGES.items():
            if name not in found and shows(r.get("report") or {}):
                found[name] = r
    return found


def _history(binary, state):
    q = subprocess.run([binary, "query", "--state-dir", state, "--json", "--vm", "guest",
                        "--limit", "1000"], capture_output=True, text=True, timeout=60)
    return q.stdout


def agent_changes_host(guest, log, timeout):
    """After the hand-made connections: a real collector, the guest's changes,
    then every change stored. Returns the results for host/."""
    import json
    binary = collector_binary(guest)
    out = {}
    with tempfile.TemporaryDirectory(prefix="dxcoll-") as state:
        coll = CollectorProc(binary, guest.agent_sock, state, log)
        try:
            guest.wait_console("host connected", 3, timeout)
            guest.tell_guest("changes")
            guest.wait_console("DAXPROBE-CHANGES-DONE", 1, timeout)
            # Woken by each line the collector logs (a report stored), never by a timer.
            deadline = time.monotonic() + timeout
            while True:
                seen = len(coll.lines)
                text = _history(binary, state)
                reps = (json.loads(text) if text.strip() else {}).get("reports", [])
                if len(stored_changes(reps)) == len(CHANGES) or time.monotonic() > deadline:
                    break
                with coll.cond:
                    coll.cond.wait_for(lambda: len(coll.lines) > seen or coll.eof,
                                       max(0.0, deadline - time.monotonic()))
                if coll.eof:
                    break
            out["changes-history.json"] = text
        finally:
            out["changes-collector.rc"] = coll.stop()
    return out


def check_agent_changes(c, res):
    import json
    text = res.text("host/changes-history.json")
    if not c.check(bool(text.strip()), "the collector's history after the changes"):
        return
    reps = json.loads(text).get("reports", [])
    found = stored_changes(reps)
    seqs = [(r.get("seq"), r.get("reason"), r.get("verdict")) for r in reps]
    for name in CHANGES:
        c.check(name in found, f"the collector stored a change report showing the {name}: {seqs}")
    # The namespace and devdax changes came through the uevent watch: the
    # agent logged the burst it noticed and the report it made of it.
    log = res.text("agent.log")
    noticed = {int(n) for n in re.findall(r"change noticed \(uevent [^\n]*\): report (\d+)", log)}
    for name in ("namespace", "system-ram"):
        if name in found:
            c.check(found[name].get("seq") in noticed,
                    f"the {name} report (seq {found[name].get('seq')}) was made on a uevent "
                    f"(reports made on uevents: {sorted(noticed)})")
    # Some burst names an nd or dax device, not only block ones. Not
    # necessarily the first: under TCG at load ~4 pmem0's removal (block)
    # came >100 ms before pfn0.0's unbind, a burst of its own, in 2 of 3
    # runs (before and after the poll went to 250 ms).
    bursts = re.findall(r"change noticed \((uevent [^\n]*)\): report", log)
    c.check(any(" nd " in b or " dax " in b for b in bursts),
            f"a uevent burst names an nd or dax device: {bursts!r}")
    c.eq(res.text("host/changes-collector.rc").strip(), "0", "collector exit code (SIGTERM: clean)")

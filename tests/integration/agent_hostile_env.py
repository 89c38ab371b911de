#!/usr/bin/env python3
"""The agent's own bad environments, black box (issue 11, item 8).

`daxprobe check --root TREE`, `daxprobe profile --path` and the
`daxprobe agent` daemon, as processes, on: truncated and emptied sysfs/proc
files, unreadable ones read as an unprivileged user, thousands of mounts
with escaped names, a FIFO/directory/device/dangling symlink as --path, and a
tree holding FIFOs. Each must end with a clear verdict or error, never a
crash (a signal, a non-JSON answer to --json) or a hang (the guard kills
it and the case fails). check-hostile-input (tests/unit/probes) covers
`check --path` and the live check as uid 65534; this covers the rest.

usage: agent_hostile_env.py DAXPROBE [CASE...]
"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

import blackbox as bb
from blackbox import check

DAXPROBE = sys.argv[1]
FIXTURE = os.path.join(bb.FIXTURES, "fsdax-xfs")
NOBODY = 65534
# The files a check reads in the fixture's capture. Those whose content the
# report carries must name the failure when unreadable; the others
# (per-device sysfs attributes, the kernel release) become unknown (null),
# and the verdict rests on the other evidence.
NAMED = ["proc/self/mountinfo", "proc/meminfo", "proc/vmstat", "sys/firmware/acpi/tables/NFIT",
         "dev/kmsg"]
FILES = NAMED + ["sys/class/block/pmem0/queue/dax", "sys/class/block/pmem0/dev",
                 "proc/sys/kernel/osrelease", "sys/kernel/tracing/available_events",
                 "sys/block/pmem0/badblocks", "proc/sys/kernel/perf_event_paranoid"]


def run(*args, user=None):
    kw = {"user": user, "group": user, "extra_groups": []} if user is not None else {}
    try:
        p = subprocess.run([DAXPROBE, *args], capture_output=True, timeout=bb.HANG_GUARD_S,
                           stdin=subprocess.DEVNULL, **kw)
    except subprocess.TimeoutExpired:
        raise bb.Failure(f"hang guard: daxprobe {' '.join(args)} did not finish")
    out = p.stdout.decode(errors="replace")
    check(p.returncode >= 0, f"daxprobe {' '.join(args)} died of signal {-p.returncode}: {p.stderr[-500:]!r}")
    return p.returncode, out, p.stderr.decode(errors="replace")


def verdict_of(args, user=None):
    rc, out, err = run("check", "--json", "--no-active", *args, user=user)
    try:
        doc = json.loads(out)
    except ValueError:
        raise bb.Failure(f"check {' '.join(args)}: not JSON (rc {rc}): {out[:200]!r} {err[-300:]!r}")
    code = (doc.get("verdict") or {}).get("code")
    check(rc in (0, 1, 2) and code, f"check {' '.join(args)}: rc {rc}, verdict {doc.get('verdict')}")
    return doc


def tree(tmp, name="root"):
    """A copy of a capture from the real guest: --replay reads its live.json
    (the topology, so the per-device sysfs files are read too), --root only
    its files."""
    t = os.path.join(tmp, name)
    shutil.copytree(FIXTURE, t, symlinks=True)
    return t


def case_truncated():
    tmp = tempfile.mkdtemp(prefix="dxenv-trunc-")
    try:
        for rel in FILES:
            for keep in ("half", "empty"):
                t = tree(tmp, f"{rel.replace('/', '_')}-{keep}")
                p = os.path.join(t, rel)
                size = os.path.getsize(p)
                os.truncate(p, size // 2 if keep == "half" else 0)
                verdict_of(["--root", t])
                doc = verdict_of(["--replay", t])
                if rel.endswith("NFIT"):
                    nfit = doc.get("nfit") or {}
                    check(nfit.get("problems") or nfit.get("error"),
                          f"a {keep} NFIT gave no problem: {nfit}")
                shutil.rmtree(t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_unreadable():
    tmp = tempfile.mkdtemp(prefix="dxenv-perm-")
    user = NOBODY if os.geteuid() == 0 else None  # root reads through mode 000
    try:
        os.chmod(tmp, 0o755)
        for rel in FILES:
            t = tree(tmp, rel.replace("/", "_"))
            for dirpath, dirs, files in os.walk(t):
                os.chmod(dirpath, 0o755)
                for f in files:
                    os.chmod(os.path.join(dirpath, f), 0o644)
            os.chmod(os.path.join(t, rel), 0)
            doc = verdict_of(["--replay", t], user=user)
            if rel in NAMED:
                check("Permission denied" in json.dumps(doc),
                      f"unreadable {rel}: the report does not say so: {doc.get('verdict')}")
            if rel.endswith("available_events"):
                # Not "tracefs not mounted: mount -t tracefs ...": it is mounted.
                reason = ((doc.get("faults") or {}).get("tracepoints") or {}).get("reason") or ""
                check("not readable" in reason, f"unreadable tracefs reported as {reason!r}")
            shutil.rmtree(t)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_many_mounts():
    tmp = tempfile.mkdtemp(prefix="dxenv-mounts-")
    try:
        t = tree(tmp)
        mi = os.path.join(t, "proc/self/mountinfo")
        with open(mi) as f:
            real = f.read()
        lines = [real.rstrip("\n")]
        for i in range(5000):
            name = f"/mnt/m{i}\\040sp\\011tab\\012nl\\134bs"
            lines.append(f"{100 + i} 1 0:{50 + i % 200} / {name} rw,relatime - tmpfs tmpfs rw")
        lines.append("9999 1 259:9 / /mnt/a;reboot;$(id)\\033[31m rw - ext4 /dev/pmem9 rw,dax=always")
        with open(mi, "w") as f:
            f.write("\n".join(lines) + "\n")
        doc = verdict_of(["--root", t])
        check(any(m.get("mount_point") == "/mnt/pmem" for m in doc.get("mounts") or []),
              "the DAX mount is lost among 5000 others")
        rc, out, err = run("check", "--no-active", "--root", t)
        check(rc in (0, 1, 2), f"text report rc {rc}: {err[-300:]!r}")
        check("\x1b" not in out and "\x1b" not in err, "a raw ESC from a mount point reached the terminal")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_profile_paths():
    tmp = tempfile.mkdtemp(prefix="dxenv-path-")
    try:
        fifo = os.path.join(tmp, "fifo")
        os.mkfifo(fifo)
        os.mkdir(os.path.join(tmp, "dir"))
        os.symlink(os.path.join(tmp, "nowhere"), os.path.join(tmp, "dangling"))
        for name, path in [("FIFO", fifo), ("directory", os.path.join(tmp, "dir")),
                           ("dangling symlink", os.path.join(tmp, "dangling")), ("device", "/dev/null")]:
            rc, out, err = run("profile", "--path", path)
            check(rc != 0 and path in out + err, f"profile --path on a {name}: rc {rc}, {out[-300:]!r} {err[-300:]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def case_profile_unprivileged():
    if os.geteuid() != 0:
        bb.skip("needs root to run profile as uid 65534")
    tmp = tempfile.mkdtemp(prefix="dxenv-profuser-")
    try:
        os.chmod(tmp, 0o755)
        path = os.path.join(tmp, "data")
        with open(path, "wb") as f:
            f.write(b"\xa5" * (1 << 20))
        os.chmod(path, 0o644)
        # perf and tracefs may be refused to this user: a mapping verdict all the same.
        rc, out, err = run("profile", "--json", "--path", path, user=NOBODY)
        doc = json.loads(out) if out.startswith("{") else {}
        files = doc.get("files") or [{}]
        check(rc in (0, 1, 2) and (files[0].get("mapping") or {}).get("code"),
              f"profile as uid 65534: rc {rc}, {out[:300]!r} {err[-300:]!r}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def agent_start_report(sock, agent):
    """The daemon's first report, read as a host (its check ran to the end)."""
    bb.wait_socket(sock, agent)
    view = bb.look_at_agent(sock)
    check(view.resent, f"no report from the agent:\n{agent.log()}")
    report = view.resent[min(view.resent)]["data"]["report"]
    check((report.get("verdict") or {}).get("code"), f"a report without a verdict: {report}")
    return report


def case_agent_fifo_tree():
    tmp = tempfile.mkdtemp(prefix="dxenv-agentfifo-")
    agent = None
    try:
        t = tree(tmp)
        for rel in ("proc/meminfo", "dev/kmsg", "proc/self/mountinfo"):
            os.remove(os.path.join(t, rel))
            os.mkfifo(os.path.join(t, rel))
        sock = os.path.join(tmp, "agent.sock")
        agent = bb.start_agent(DAXPROBE, sock, root=t, interval=3600)
        report = agent_start_report(sock, agent)
        check("FIFO" in json.dumps(report), f"the FIFOs are not named: {report.get('verdict')}")
    finally:
        if agent:
            agent.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def case_agent_unprivileged():
    if os.geteuid() != 0:
        bb.skip("needs root to start the agent as uid 65534 (as this user it is not a test)")
    tmp = tempfile.mkdtemp(prefix="dxenv-agentuser-")
    agent = None
    try:
        os.chmod(tmp, 0o777)
        sock = os.path.join(tmp, "agent.sock")
        agent = bb.Proc([DAXPROBE, "agent", "--listen", sock, "--interval", "3600"],
                        "agent (uid 65534)", user=NOBODY)
        agent_start_report(sock, agent)
        st = os.stat(sock)
        check(st.st_uid == NOBODY and stat.S_ISSOCK(st.st_mode), "the socket is not the agent's")
    finally:
        if agent:
            agent.kill()
        shutil.rmtree(tmp, ignore_errors=True)


CASES = {"truncated": case_truncated, "unreadable": case_unreadable, "many-mounts": case_many_mounts,
         "profile-paths": case_profile_paths, "profile-unprivileged": case_profile_unprivileged,
         "agent-fifo-tree": case_agent_fifo_tree,
         "agent-unprivileged": case_agent_unprivileged}

if __name__ == "__main__":
    sys.exit(bb.main(CASES, sys.argv[2:]))

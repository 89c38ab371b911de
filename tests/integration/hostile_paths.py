#!/usr/bin/env python3
"""Root's commands on paths another user controls (issue 31, items 1 and 2;
issue 45, item 3: links one directory up, hard links, --state-dir swaps,
and --listen on a live socket, another user's, or a held lock).

Root runs the real `daxprobe` (`check --capture`, `check --state-dir`,
`exercise`, `profile -o`, `agent --listen`)
on names in a sticky world-writable directory, as in /tmp; a second user,
uid 65534 through setpriv, plants symlinks, FIFOs and files there, or swaps
a parent directory while `exercise` runs. No case may write, truncate or
remove anything but daxprobe's own files: a root-only "victim" file and
directory are checked after each. Every case runs with fs.protected_symlinks,
protected_hardlinks, protected_regular and protected_fifos all 0 (daxprobe
alone must hold) and all 1 (the kernel's rules on top); the old values are
restored on every exit. Where the kernel at 1 refuses the attacker's own
step (a hard link to root's file), root makes that link itself: the state
daxprobe meets is the same, and it must refuse it just the same.

The exercise swap is made while exercise is stopped, not raced: strace
injects SIGSTOP at its first fallocate (the file exists by then), the test
waits for strace to report the stop, swaps, then sends SIGCONT.

usage: hostile_paths.py DAXPROBE [CASE...]
"""
import fcntl
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import shutil

import blackbox as bb
from blackbox import check

DAXPROBE = sys.argv[1] if len(sys.argv) > 1 else ""
NOBODY = 65534
SYSCTLS = ["protected_symlinks", "protected_hardlinks", "protected_regular", "protected_fifos"]
SECRET = "root's secret\n"


class Scene:
    """A root-owned base holding `tmp` (mode 1777, like /tmp) and `rootonly`
    (mode 0700, with `victim`, mode 0600): what no case may change."""

    def __init__(self):
        self.base = tempfile.mkdtemp(prefix="dxhostile-")
        os.chmod(self.base, 0o755)
        self.tmp = os.path.join(self.base, "tmp")
        os.mkdir(self.tmp)
        os.chmod(self.tmp, 0o1777)
        self.rootonly = os.path.join(self.base, "rootonly")
        os.mkdir(self.rootonly, 0o700)
        self.victim = os.path.join(self.rootonly, "victim")
        with open(self.victim, "w") as f:
            f.write(SECRET)
        os.chmod(self.victim, 0o600)

    def path(self, rel):
        return os.path.join(self.tmp, rel)

    def attacker(self, script, may_fail=False):
        """Runs a shell script as uid 65534 in tmp; True if it succeeded."""
        p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--",
                            "sh", "-ec", script], cwd=self.tmp, capture_output=True, text=True,
                           timeout=bb.HANG_GUARD_S)
        check(may_fail or p.returncode == 0, f"attacker's `{script}` failed: {p.stderr}")
        return p.returncode == 0

    def hard_link(self, target, rel):
        """A second name `rel` in tmp for root's `target`: by the attacker
        where fs.protected_hardlinks=0 lets them, else by root."""
        if not self.attacker(f"ln {target} {rel}", may_fail=True):
            os.link(target, self.path(rel))

    def victim_intact(self):
        check(sorted(os.listdir(self.rootonly)) == ["victim"],
              f"root-only directory changed: {sorted(os.listdir(self.rootonly))}")
        with open(self.victim) as f:
            got = f.read()
        check(got == SECRET, f"root-only victim overwritten: {got[:80]!r}")

    def close(self):
        shutil.rmtree(self.base, ignore_errors=True)


def scene(fn):
    def run():
        s = Scene()
        try:
            fn(s)
            s.victim_intact()
        finally:
            s.close()
    run.__name__ = fn.__name__
    return run


def daxprobe(*args):
    try:
        p = subprocess.run([DAXPROBE, *args], capture_output=True, text=True, errors="replace",
                           timeout=bb.HANG_GUARD_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise bb.Failure(f"hang guard: daxprobe {' '.join(args)} did not finish")
    return p.returncode, p.stdout, p.stderr


# --- check --capture DIR ------------------------------------------------------

@scene
def case_capture_planted_symlink(s):
    # Issue 31, item 1, as filed: a tree whose proc/meminfo leads to the victim.
    s.attacker(f"mkdir -p cap/proc && ln -s {s.victim} cap/proc/meminfo")
    rc, out, err = daxprobe("check", "--no-active", "--capture", s.path("cap"))
    s.victim_intact()
    check(rc == 2 and "exists" in out, f"an existing DIR was not refused: rc {rc} {out[-300:]!r}")


@scene
def case_capture_dir_symlink(s):
    s.attacker(f"ln -s {s.rootonly} cap")
    rc, out, err = daxprobe("check", "--no-active", "--capture", s.path("cap"))
    s.victim_intact()
    check(rc == 2 and "exists" in out, f"a DIR that is a symlink was not refused: rc {rc} {out[-300:]!r}")


@scene
def case_capture_their_dir(s):
    # Empty and writable by all: they would read root's capture and race its names.
    s.attacker("mkdir cap && chmod 777 cap")
    rc, out, err = daxprobe("check", "--no-active", "--capture", s.path("cap"))
    s.victim_intact()
    check(rc == 2 and "exists" in out, f"another user's DIR was not refused: rc {rc} {out[-300:]!r}")
    check(os.listdir(s.path("cap")) == [], f"root wrote into their DIR: {os.listdir(s.path('cap'))}")


@scene
def case_capture_fifo(s):
    s.attacker("mkfifo cap")
    rc, out, err = daxprobe("check", "--no-active", "--capture", s.path("cap"))
    s.victim_intact()
    check(rc == 2 and "exists" in out, f"a FIFO as DIR was not refused: rc {rc} {out[-300:]!r}")


@scene
def case_capture_new_dir(s):
    cap = s.path("cap")
    rc, out, err = daxprobe("check", "--json", "--no-active", "--capture", cap)
    doc = json.loads(out)
    check(rc in (0, 1) and "capture_error" not in doc, f"capture failed: rc {rc} {doc.get('capture_error')}")
    st = os.lstat(cap)
    check(stat.S_ISDIR(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o700,
          f"DIR is not root's, mode 0700: uid {st.st_uid} mode {oct(st.st_mode)}")
    check(os.path.isfile(os.path.join(cap, "live.json")) and os.path.isfile(os.path.join(cap, "proc/meminfo")),
          f"capture incomplete: {os.listdir(cap)}")
    rc, out, err = daxprobe("check", "--json", "--replay", cap)
    check(rc in (0, 1) and json.loads(out).get("verdict"), f"the capture does not replay: rc {rc} {err[-300:]!r}")


# --- exercise PATH --------------------------------------------------------------

def exercise_stopped(s, path):
    """Starts `daxprobe exercise PATH` under strace, stopped at its first
    fallocate (the file exists by then). Returns (strace Proc, tracee pid, stdout file)."""
    out = tempfile.TemporaryFile(mode="w+")
    proc = bb.Proc(["strace", "-e", "trace=fallocate", "-e", "inject=fallocate:signal=SIGSTOP:when=1",
                    DAXPROBE, "exercise", path, "--size", "4M", "--no-perf", "--json"],
                   "strace daxprobe exercise", stdout=out)
    proc.wait_log(lambda l: "stopped by SIGSTOP" in l, "the exercise's stop")
    with open(f"/proc/{proc.proc.pid}/task/{proc.proc.pid}/children") as f:
        tracee = int(f.read().split()[0])
    check(os.path.isfile(path), f"{path} does not exist while exercise is stopped")
    return proc, tracee, out


def exercise_result(proc, tracee, out):
    os.kill(tracee, signal.SIGCONT)
    rc = proc.wait_exit()
    out.seek(0)
    text = out.read()
    try:
        return rc, json.loads(text)
    except ValueError:
        raise bb.Failure(f"exercise: not JSON (rc {rc}): {text[:300]!r}\n{proc.log()[-1000:]}")


@scene
def case_exercise_parent_swapped(s):
    # Issue 31, item 2, as filed: `mv d d.old; ln -s /rootonly d` once the file exists.
    s.attacker("mkdir -p att/d")
    proc, tracee, out = exercise_stopped(s, s.path("att/d/victim"))
    s.attacker(f"mv att/d att/d.old && ln -s {s.rootonly} att/d")
    rc, doc = exercise_result(proc, tracee, out)
    s.victim_intact()
    check(not os.path.exists(s.path("att/d.old/victim")), "exercise left its own file behind")
    # It measured the file it made, not what the name led to after the swap.
    # (the victim is 14 bytes: its residency is at most a page).
    resident = [(p.get("page_cache_after") or {}).get("resident_bytes") or 0 for p in doc.get("phases") or []]
    check(doc.get("statx_error") is None and max(resident, default=0) > 1 << 20,
          f"measured another file: statx_error {doc.get('statx_error')!r}, resident after {resident}")
    check(rc == 0 and doc.get("removed") and doc.get("remove_note"),
          f"rc {rc}, removed {doc.get('removed')}, remove_note {doc.get('remove_note')!r}, "
          f"error {doc.get('error')!r}")


@scene
def case_exercise_name_replaced(s):
    s.attacker("mkdir -p att/d")
    proc, tracee, out = exercise_stopped(s, s.path("att/d/victim"))
    s.attacker(f"mv att/d/victim att/d/moved && ln -s {s.victim} att/d/victim")
    rc, doc = exercise_result(proc, tracee, out)
    s.victim_intact()
    # Removing the name would remove their symlink and claim "removed" for a
    # file it never removed; it must say what happened instead.
    check(os.path.islink(s.path("att/d/victim")), "exercise removed a name it did not create")
    check(rc == 1 and doc.get("removed") is False and "no longer" in (doc.get("remove_error") or ""),
          f"rc {rc}, removed {doc.get('removed')}, remove_error {doc.get('remove_error')!r}")


@scene
def case_exercise_hardlinked(s):
    # Issue 45, item 3: a second name made while it runs keeps the inode,
    # and its 4 MiB, alive after exercise unlinks its own name.
    s.attacker("mkdir -p att/d")
    proc, tracee, out = exercise_stopped(s, s.path("att/d/victim"))
    s.hard_link(s.path("att/d/victim"), "att/d/keep")
    rc, doc = exercise_result(proc, tracee, out)
    size = os.stat(s.path("att/d/keep")).st_size
    check(size == 0, f"exercise left {size} bytes of root's file under another name")
    check(rc == 1 and doc.get("removed") is False and "hard link" in (doc.get("remove_error") or ""),
          f"rc {rc}, removed {doc.get('removed')}, remove_error {doc.get('remove_error')!r}")


@scene
def case_exercise_their_parent_symlink(s):
    s.attacker(f"ln -s {s.rootonly} lnk")
    rc, out, err = daxprobe("exercise", s.path("lnk/new"), "--size", "2M", "--no-perf")
    # It removes its own file at the end, so the victim's directory alone
    # cannot show that it went through their link: the refusal does.
    check(rc != 0 and "not followed" in out + err, f"exercise through their link: rc {rc} {out[-300:]!r}")


@scene
def case_exercise_planted(s):
    s.attacker(f"mkdir -p att && mkfifo att/fifo && ln -s {s.rootonly}/new att/link")
    for name in ("fifo", "link"):
        rc, out, err = daxprobe("exercise", s.path("att/" + name), "--size", "2M", "--no-perf")
        check(rc == 2 and "exists" in out, f"exercise on a planted {name}: rc {rc} {out[-300:]!r}")


# --- profile -o FILE ------------------------------------------------------------

def profile_to(path):
    return daxprobe("profile", "--no-perf", "-o", path, "--", "true")


@scene
def case_output_their_symlink(s):
    s.attacker(f"ln -s {s.victim} out")
    rc, out, err = profile_to(s.path("out"))
    s.victim_intact()
    check(rc == 2, f"-o through their symlink: rc {rc} {err[-300:]!r}")


@scene
def case_output_their_file(s):
    s.attacker("echo their text > out && chmod 666 out")
    rc, out, err = profile_to(s.path("out"))
    with open(s.path("out")) as f:
        kept = f.read()
    check(rc == 2 and kept == "their text\n", f"-o on their file: rc {rc}, now {kept[:80]!r} {err[-300:]!r}")


@scene
def case_output_their_fifo(s):
    s.attacker("mkfifo -m 666 out")
    rc, out, err = profile_to(s.path("out"))  # a hang here is the hang guard's failure
    check(rc == 2 and "nothing was run" in err, f"-o on their FIFO: rc {rc} {err[-300:]!r}")


@scene
def case_output_hardlink_to_root(s):
    # Issue 45, item 3: a second name for a root 0600 file, in /tmp.
    rootfile = os.path.join(s.base, "rootfile")
    with open(rootfile, "w") as f:
        f.write(SECRET)
    os.chmod(rootfile, 0o600)
    s.hard_link(rootfile, "out")
    rc, out, err = profile_to(s.path("out"))
    with open(rootfile) as f:
        kept = f.read()
    check(rc == 2 and kept == SECRET, f"-o on a hard link to root's file: rc {rc}, now {kept[:80]!r}")


@scene
def case_output_their_parent_symlink(s):
    # Issue 45, item 3: their symlink one directory up, not the last name.
    s.attacker(f"ln -s {s.rootonly} lnk")
    rc, out, err = profile_to(s.path("lnk/out.json"))
    s.victim_intact()
    check(rc == 2, f"-o through their parent symlink: rc {rc} {err[-300:]!r}")


@scene
def case_output_own_parent_symlink(s):
    # Root's own links on the way (/var/run -> /run) keep working.
    real = os.path.join(s.base, "reports")
    os.mkdir(real)
    os.symlink(real, s.path("rootlink"))
    rc, out, err = profile_to(s.path("rootlink/out.json"))
    check(rc == 0 and os.path.getsize(os.path.join(real, "out.json")) > 0,
          f"-o through root's own parent symlink: rc {rc} {err[-300:]!r}")


@scene
def case_output_own(s):
    # What `>` would do: a new file, root's own file truncated, root's own
    # symlink followed, and anything outside /tmp-like directories as usual.
    mine = s.path("mine")
    with open(mine, "w") as f:
        f.write("x" * 100000)
    os.symlink(mine, s.path("mylink"))
    elsewhere = os.path.join(s.base, "report")
    for path in (s.path("new"), mine, s.path("mylink"), elsewhere):
        rc, out, err = profile_to(path)
        real = os.path.realpath(path)
        with open(real) as f:
            text = f.read()
        check(rc == 0 and 0 < len(text) < 100000 and "x" * 10 not in text,
              f"-o {path}: rc {rc} {err[-300:]!r} {text[:100]!r}")


# --- check --state-dir DIR -----------------------------------------------------

@scene
def case_state_dir_swapped(s):
    # Issue 45, item 3: root's state directory in a directory the other user
    # owns, swapped for their symlink between the load and the save. strace
    # stops the check right after it first opens the directory (-P: only
    # calls on that path count); every stop after the swap is continued.
    s.attacker("mkdir att")
    state = s.path("att/state")
    os.mkdir(state, 0o700)
    out = tempfile.TemporaryFile(mode="w+")
    proc = bb.Proc(["strace", "-P", state, "-e", "trace=open,openat,openat2",
                    "-e", "inject=open,openat,openat2:signal=SIGSTOP:when=1",
                    DAXPROBE, "check", "--no-active", "--json", "--state-dir", state],
                   "strace daxprobe check", stdout=out)
    proc.wait_log(lambda l: "stopped by SIGSTOP" in l, "the check's stop")
    with open(f"/proc/{proc.proc.pid}/task/{proc.proc.pid}/children") as f:
        tracee = int(f.read().split()[0])
    s.attacker(f"mv att/state att/state.old && ln -s {s.rootonly} att/state")
    deadline = time.monotonic() + bb.HANG_GUARD_S  # then wait_exit's guard fails it
    while proc.proc.poll() is None and time.monotonic() < deadline:
        try:
            os.kill(tracee, signal.SIGCONT)
        except ProcessLookupError:
            break
        try:
            proc.proc.wait(timeout=0.05)
        except subprocess.TimeoutExpired:
            pass
    rc = proc.wait_exit()
    s.victim_intact()
    check(rc in (0, 1) and os.path.isfile(s.path("att/state.old/dimm-shutdowns.json")),
          f"the save did not go where the load read: rc {rc}, state.old has "
          f"{os.listdir(s.path('att/state.old'))}\n{proc.log()[-600:]}")


@scene
def case_state_dir_theirs(s):
    # Counts they can write are counts they choose: their directory is refused.
    s.attacker("mkdir st")
    rc, out, err = daxprobe("check", "--no-active", "--json", "--state-dir", s.path("st"))
    check(rc == 2 and os.listdir(s.path("st")) == [],
          f"another user's state directory: rc {rc}, holds {os.listdir(s.path('st'))} {out[-300:]!r}")


# --- agent --listen SOCKET ------------------------------------------------------

@scene
def case_agent_socket_parent_swapped(s):
    # The socket's directory renamed and replaced by a symlink while the
    # agent runs: at exit it must remove its own socket, not what the path
    # names by then.
    s.attacker("mkdir -p att")
    sock = s.path("att/victim")
    agent = bb.start_agent(DAXPROBE, sock, interval=3600)
    bb.wait_socket(sock, agent)
    st = os.lstat(sock)
    check(stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
          f"the socket is not 0600: {oct(st.st_mode)}")
    s.attacker(f"mv att att.old && ln -s {s.rootonly} att")
    agent.kill(signal.SIGTERM)
    s.victim_intact()
    check(not os.path.exists(s.path("att.old/victim")), "the agent left its socket behind")


def accepting(path):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        c.connect(path)
        return True
    except OSError:
        return False
    finally:
        c.close()


def refused_agent(sock, what):
    """Starts a second agent on `sock`; it must exit non-zero, saying why.
    It fails as soon as the agent makes a socket node of its own there (no
    wait for the hang guard when it takes the path)."""
    def node():  # the inode number alone is reused at once on tmpfs
        try:
            st = os.lstat(sock)
            return (st.st_ino, st.st_uid, st.st_ctime_ns)
        except FileNotFoundError:
            return None
    before = node()
    b = bb.start_agent(DAXPROBE, sock, interval=3600)
    bb.wait_until(lambda: not b.alive() or node() != before, f"the agent on {what} to exit")
    if b.alive():
        b.kill(signal.SIGTERM)
        raise bb.Failure(f"an agent took {what}: its own socket is there now\n{b.log()[-600:]}")
    rc = b.wait_exit()
    check(rc != 0, f"an agent started on {what}: rc {rc}\n{b.log()[-600:]}")
    return b.log()


@scene
def case_listen_second_agent(s):
    # Issue 45, item 3: a second agent (a restart overlap, a debug run)
    # unlinked the first's socket and took the path; the first ran on,
    # unreachable, and removed the second's socket at its exit.
    sock = s.path("agent.sock")
    a = bb.start_agent(DAXPROBE, sock, interval=3600)
    bb.wait_socket(sock, a)
    log = refused_agent(sock, "a live agent's socket")
    check("live socket" in log or "holds" in log, f"no reason given: {log[-300:]}")
    check(a.alive() and accepting(sock), "the first agent lost its socket to the second")
    a.kill(signal.SIGTERM)
    check(not os.path.exists(sock) and not os.path.exists(sock + ".lock"),
          f"left behind: {os.listdir(s.tmp)}")


@scene
def case_listen_their_live_socket(s):
    # Root's agent must not delete another user's live socket in /tmp.
    srv = bb.Proc(["sh", "-c", f"cd {s.tmp} && exec setpriv --reuid={NOBODY} --regid={NOBODY} "
                   "--clear-groups -- python3 -c \"import socket, sys, time; "
                   "s = socket.socket(socket.AF_UNIX); s.bind('srv'); s.listen(); "
                   "print('listening', file=sys.stderr, flush=True); time.sleep(600)\""],
                  "their server")
    try:
        srv.wait_log(lambda l: l == "listening", "their server's listen")
        sock = s.path("srv")
        refused_agent(sock, "another user's live socket")
        check(accepting(sock) and os.lstat(sock).st_uid == NOBODY, "their live socket was replaced")
    finally:
        srv.kill()


@scene
def case_listen_live_socket_unlocked(s):
    # A live socket of root's own with no lock beside it (an agent of an
    # earlier version, any server): only the connect probe can see it.
    sock = s.path("agent.sock")
    live = socket.socket(socket.AF_UNIX)
    live.bind(sock)
    live.listen()
    try:
        log = refused_agent(sock, "a live socket with no lock")
        check("live socket" in log and accepting(sock), f"{log[-300:]}")
    finally:
        live.close()


@scene
def case_listen_their_dead_socket(s):
    # Dead, but theirs: root removes only its own names.
    s.attacker("python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('srv')\"")
    sock = s.path("srv")
    log = refused_agent(sock, "another user's dead socket")
    st = os.lstat(sock)
    check(stat.S_ISSOCK(st.st_mode) and st.st_uid == NOBODY, f"their socket was replaced: {log[-300:]}")


@scene
def case_listen_lock_held(s):
    # The lock alone, with no socket yet (two agents starting together):
    # the connect probe has nothing to find, the lock must refuse.
    sock = s.path("agent.sock")
    fd = os.open(sock + ".lock", os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        log = refused_agent(sock, "a held lock")
        check("holds" in log and not os.path.exists(sock), f"{log[-300:]} {os.listdir(s.tmp)}")
    finally:
        os.close(fd)


@scene
def case_listen_dead_socket(s):
    # What an agent killed -9 leaves, a socket nothing answers and an
    # unlocked lock file, both ours: reused, then removed at exit.
    sock = s.path("agent.sock")
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(sock)
    dead.close()
    os.close(os.open(sock + ".lock", os.O_RDONLY | os.O_CREAT, 0o600))
    a = bb.start_agent(DAXPROBE, sock, interval=3600)
    bb.wait_socket(sock, a)
    a.kill(signal.SIGTERM)
    check(os.listdir(s.tmp) == [], f"left behind: {os.listdir(s.tmp)}")


CASES = {"capture-planted-symlink": case_capture_planted_symlink,
         "capture-dir-symlink": case_capture_dir_symlink,
         "capture-their-dir": case_capture_their_dir,
         "capture-fifo": case_capture_fifo,
         "capture-new-dir": case_capture_new_dir,
         "exercise-parent-swapped": case_exercise_parent_swapped,
         "exercise-name-replaced": case_exercise_name_replaced,
         "exercise-planted": case_exercise_planted,
         "exercise-hardlinked": case_exercise_hardlinked,
         "exercise-their-parent-symlink": case_exercise_their_parent_symlink,
         "output-their-symlink": case_output_their_symlink,
         "output-their-file": case_output_their_file,
         "output-their-fifo": case_output_their_fifo,
         "output-own": case_output_own,
         "output-hardlink-to-root": case_output_hardlink_to_root,
         "output-their-parent-symlink": case_output_their_parent_symlink,
         "output-own-parent-symlink": case_output_own_parent_symlink,
         "state-dir-swapped": case_state_dir_swapped,
         "state-dir-theirs": case_state_dir_theirs,
         "agent-socket-parent-swapped": case_agent_socket_parent_swapped,
         "listen-second-agent": case_listen_second_agent,
         "listen-their-live-socket": case_listen_their_live_socket,
         "listen-live-socket-unlocked": case_listen_live_socket_unlocked,
         "listen-their-dead-socket": case_listen_their_dead_socket,
         "listen-lock-held": case_listen_lock_held,
         "listen-dead-socket": case_listen_dead_socket}


def sysctl(name, value=None):
    path = f"/proc/sys/fs/{name}"
    if value is None:
        with open(path) as f:
            return f.read().strip()
    with open(path, "w") as f:
        f.write(value)


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root to test root's commands")
        return 77
    for tool in ("setpriv", "strace"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (packaging/install-deps.sh installs it)")
            return 77
    old = {n: sysctl(n) for n in SYSCTLS}
    # meson's timeout sends SIGTERM, whose default action skips `finally`:
    # as an exception it restores the sysctls like any other exit.
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))
    names = sys.argv[2:] or list(CASES)
    rc = 0
    try:
        for value in ("0", "1"):
            for n in SYSCTLS:
                sysctl(n, value)
            print(f"# fs.{', '.join(SYSCTLS)} = {value}", flush=True)
            r = bb.main(CASES, names)
            rc = max(rc, r if r != 77 else 0)
    finally:
        for n, v in old.items():
            sysctl(n, v)
    return rc


if __name__ == "__main__":
    sys.exit(main())

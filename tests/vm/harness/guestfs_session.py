"""One libguestfs appliance launch, as its users run it: guestfish.

`guestfish --listen -a /dev/null` starts a guestfish server; `--remote run`
launches the appliance (libguestfs boots QEMU through LIBGUESTFS_HV, the
test bed's tests/vm/guestfs_hv.py), `--remote debug sh CMD` runs CMD inside
it, `--remote exit` closes the handle (libguestfs shuts the appliance down
and reaps QEMU). The launch and the close are timed apart: together they are
what libguestfs's boot-benchmark measures (guestfs_launch + guestfs_close).

Every launch has its own folder (TMPDIR and LIBGUESTFS_CACHEDIR: libguestfs's
temporary files and guestfish's socket), and the wrapper's record there
({pid, argv, rc, ru_maxrss_kb}). QEMU is killed and reaped in every case
(context manager): the server, then the QEMU pid the wrapper recorded.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from .guest import GuestError, Skip, TestBedError

VM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HV = os.path.join(VM_DIR, "guestfs_hv.py")


def appliance_info(build_vm_dir):
    """guestfs.json as the build left it, or TestBedError naming the step."""
    path = os.path.join(build_vm_dir, "guestfs.json")
    if not os.path.exists(path):
        raise TestBedError("guestfs-appliance", f"no {path} (meson compile -C BUILDDIR "
                           "guestfs-appliance)")
    info = json.load(open(path))
    if not info.get("available"):
        raise TestBedError(f"guestfs-appliance: {info.get('step') or '?'} "
                           "(harness/guestfs_appliance.py)", info.get("reason") or "?")
    return info


class Launch:
    """`with Launch(info, "stock"|"dax", workdir) as g: g.launch(); g.sh(...); g.close()`"""

    def __init__(self, info, mode, workdir, verbose=False, timeout=600):
        if not shutil.which("guestfish"):
            raise Skip("guestfish not found (packaging/install-deps.sh installs libguestfs-tools)")
        self.info, self.mode, self.timeout = info, mode, timeout
        os.makedirs(workdir, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix=f"guestfs-{mode}-", dir=workdir)
        self.record_path = os.path.join(self.dir, "hv.json")
        self.log_path = os.path.join(self.dir, "guestfish.log")
        self.env = dict(os.environ, LIBGUESTFS_PATH=info["appliance"], LIBGUESTFS_BACKEND="direct",
                        LIBGUESTFS_HV=HV, LIBGUESTFS_CACHEDIR=self.dir, TMPDIR=self.dir,
                        DAXPROBE_GUESTFS_MODE=mode,
                        DAXPROBE_GUESTFS_NVDIMM=info["nvdimm"]["path"],
                        DAXPROBE_GUESTFS_RECORD=self.record_path,
                        PYTHONPATH=VM_DIR)
        for k in ("LIBGUESTFS_DEBUG", "LIBGUESTFS_TRACE"):
            self.env.pop(k, None)
        self.client_env = dict(self.env)  # guestfish --remote: a client, its own handle
        if verbose:
            self.env["LIBGUESTFS_DEBUG"] = "1"  # the server: the appliance's console in the log
        self.pid = None
        self.times = {}

    def __enter__(self):
        with open(self.log_path, "ab") as log:
            p = subprocess.run(["guestfish", "--listen", "-a", "/dev/null"], env=self.env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                               text=True, timeout=60)
        m = re.search(r"GUESTFISH_PID=(\d+)", p.stdout)
        if p.returncode != 0 or not m:
            raise GuestError(f"guestfish --listen exited {p.returncode}: {p.stdout!r} "
                             f"(log {self.log_path})")
        self.pid = int(m.group(1))
        return self

    def remote(self, *argv, timeout=None):
        p = subprocess.run(["guestfish", f"--remote={self.pid}", "--", *argv], env=self.client_env,
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout or self.timeout)
        if p.returncode != 0:
            raise GuestError(f"guestfish {' '.join(argv)[:80]} exited {p.returncode}: "
                             f"{p.stderr.strip()[-2000:]} (log {self.log_path})")
        return p.stdout

    def launch(self):
        t0 = time.monotonic()
        self.remote("run")
        self.times["launch_s"] = round(time.monotonic() - t0, 3)
        return self.times["launch_s"]

    def sh(self, cmd):
        """CMD's stdout inside the appliance (`debug sh`: /bin/sh -c CMD)."""
        out = self.remote("debug", "sh", cmd)
        return out[:-1] if out.endswith("\n") else out  # guestfish adds one

    def script(self, text):
        """TEXT as a shell script inside the appliance, its stdout and stderr:
        base64 through `debug sh` (no quoting through two command lines;
        guestfish `upload` needs a mounted /sysroot)."""
        import base64
        b64 = base64.b64encode(text.encode()).decode()
        return self.sh(f"echo {b64} | base64 -d > /tmp/daxprobe-test.sh; sh /tmp/daxprobe-test.sh 2>&1")

    def record(self):
        try:
            with open(self.record_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None

    def qemu_pid(self):
        r = self.record()
        return r["pid"] if r else None

    def close(self):
        """`exit`: libguestfs shuts the appliance down; done when the server is gone."""
        t0 = time.monotonic()
        self.remote("exit", timeout=120)
        while _alive(self.pid) and time.monotonic() - t0 < 120:
            time.sleep(0.02)
        self.times["close_s"] = round(time.monotonic() - t0, 3)
        self.pid = None
        return self.times["close_s"]

    def __exit__(self, *exc):
        if self.pid and _alive(self.pid):
            subprocess.run(["guestfish", f"--remote={self.pid}", "--", "exit"], env=self.env,
                           capture_output=True, timeout=60)
            deadline = time.monotonic() + 30
            while _alive(self.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(self.pid):
                os.kill(self.pid, signal.SIGKILL)
        q = self.qemu_pid()
        r = self.record()
        if q and r and "rc" not in r and _alive(q):
            os.kill(q, signal.SIGKILL)
        return False


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie we do not reap (guestfish's server is not our child) still
    # answers kill 0: look at its state.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

"""Boot one guest under QEMU/TCG and get its results out.

One `Guest` = one QEMU process with its own temp folder: a sparse 512M NVDIMM
backing file (never shared: QEMU does not lock it), the agent socket
(org.daxprobe.agent.0, a unix socket server the host may connect to) and the
results port (org.daxprobe.results, a chardev file the guest writes one framed
tar archive onto). The console (ttyS0 on QEMU's stdout) is read continuously
by a thread into console.log and watched for markers, in whole lines only
(console_lines.py); it is never parsed for results.

QEMU is always killed and reaped (context manager), whatever happens.
"""

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time

from .console_lines import Console
from .virtiofsd import Virtiofsd, shared_folder

AGENT_PORT = "org.daxprobe.agent.0"
RESULTS_PORT = "org.daxprobe.results"
CONTROL_PORT = "org.daxprobe.control"  # host -> guest test control (host actors)
DONE_MARKER = b"DAXPROBE-DONE"
VIRTIOFS_TAG = "daxprobe-share"


class Skip(Exception):
    """The test cannot run here (exit 77 with the reason)."""


def connect_when_listening(path, proc, what, timeout):
    """A unix socket that `proc` is about to listen on: retry ENOENT and
    ECONNREFUSED until it does, bounded; fail at once if `proc` died."""
    import socket
    deadline = time.monotonic() + timeout
    while True:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            if proc.poll() is not None:
                raise GuestError(f"{proc.args[0]} exited (rc={proc.returncode}) before "
                                 f"{what} was connectable")
            if time.monotonic() > deadline:
                raise GuestError(f"{path} not connectable within {timeout} s")
            time.sleep(0.02)  # a bounded retry while it starts, not a test's synchronisation


class GuestError(Exception):
    pass


class TestBedError(GuestError, RuntimeError):
    """The test bed failed to build what a test needs (a guest kernel, an
    initramfs, a Debian image, an fsdax template): the test fails and names
    the step. Never a skip: a skip is for a fault of the machine (issue 30:
    six tests skipped on a bad cached template and line 2 looked green)."""

    def __init__(self, step, reason):
        super().__init__(f"test bed: {step} failed: {reason}")


def find_qemu():
    q = shutil.which("qemu-system-x86_64")
    if not q:
        raise Skip("qemu-system-x86_64 not found (apt-get install qemu-system-x86)")
    return q


class Guest:
    def __init__(self, vmlinux, initrd, scenario, *, nvdimm=True, label_size=None,
                 nvdimm_size="512M", memory="512M", capture=False, human=False,
                 extra_cmdline="", workdir=None, keep=False, virtio_pmem=False, disk=None,
                 extra_ports=(), shared_image=None, virtiofs_files=None, virtiofs_dir=None,
                 virtiofs_cache="auto", cxl=None, share=True):
        self.vmlinux = vmlinux
        self.initrd = initrd
        self.scenario = scenario
        self.nvdimm = nvdimm
        self.label_size = label_size
        self.nvdimm_size = nvdimm_size
        self.memory = memory
        self.capture = capture
        self.human = human
        self.extra_cmdline = extra_cmdline
        self.keep = keep
        # virtio_pmem: the backing file (nvdimm_path) is a virtio-pmem device
        # instead of an NVDIMM (no NFIT); disk: a raw image on virtio-blk.
        self.virtio_pmem = virtio_pmem
        self.disk = disk
        # cxl: a harness.cxl_topology.CxlTopology (a q35 machine with CXL
        # type-3 pmem; its backing files live in the run folder).
        self.cxl = cxl
        # shared_image: one read-only file that several guests boot from at
        # once (bench/sharing.py): the disk, or the pmem backing file,
        # opened readonly=on (an NVDIMM then unarmed=on) and never deleted.
        self.shared_image = shared_image
        # share: the pmem backends' share=on (QEMU's default is off, which
        # Kata's QEMU driver keeps for its read-only image: MAP_PRIVATE).
        self.share = share
        # More virtio-serial ports, each a unix socket server in the run dir:
        # {port name: socket path} (bench/agent_bench.py: org.qemu.guest_agent.0).
        self.extra_ports = {}
        self.rusage = None  # QEMU's, from wait4 once it exited (ru_maxrss: peak RSS)
        # Unix socket paths must stay under 108 bytes: use a short temp dir.
        self.dir = workdir or tempfile.mkdtemp(prefix=f"dxvm-{scenario[:12]}-")
        self.console_path = os.path.join(self.dir, "console.log")
        self.results_path = os.path.join(self.dir, "results.bin")
        self.agent_sock = os.path.join(self.dir, "agent.sock")
        self.control_sock = os.path.join(self.dir, "control.sock")
        self.nvdimm_path = (shared_image if shared_image and (nvdimm or virtio_pmem) and not disk
                            else os.path.join(self.dir, "nvdimm.img"))
        # Beside an NVDIMM, virtio-pmem gets a backing file of its own.
        self.vpmem_path = os.path.join(self.dir, "vpmem.img") if nvdimm else self.nvdimm_path
        for i, name in enumerate(extra_ports):
            self.extra_ports[name] = os.path.join(self.dir, f"port{i}.sock")
        # virtiofs_files ({name: bytes}): a fresh host folder of that much
        # random data, which virtiofsd shares under the tag VIRTIOFS_TAG.
        # virtiofs_dir: an existing folder shared as it is (several guests
        # at once: bench/sharing.py), never deleted; virtiofs_cache: virtiofsd's
        # -o cache= (auto, none, always).
        self.virtiofsd = None
        self.virtiofs_owned = bool(virtiofs_files)
        if virtiofs_files or virtiofs_dir:
            share = virtiofs_dir or shared_folder(os.path.join(self.dir, "share"),
                                                  virtiofs_files)
            self.virtiofsd = Virtiofsd(share, os.path.join(self.dir, "virtiofs.sock"),
                                       VIRTIOFS_TAG, cache=virtiofs_cache)
        self.proc = None
        self.reader = None
        self.done = threading.Event()
        self.console = Console(GuestError)
        self.t_start = None
        self.t_done = None
        self.t_exit = None

    # -- QEMU ------------------------------------------------------------------
    def command(self):
        # no_timer_check: on a saturated host, TCG can run the guest's timer
        # too late for the kernel's IO-APIC timer check, which then panics
        # ("IO-APIC + timer doesn't work", seen here at load ~17 on 2 cores).
        append = (f"console=ttyS0 panic=-1 quiet no_timer_check daxprobe.scenario={self.scenario}"
                  f" daxprobe.capture={int(self.capture)} daxprobe.human={int(self.human)}")
        if self.extra_cmdline:
            append += " " + self.extra_cmdline
        machine = "pc,nvdimm=on" if self.nvdimm else "pc"
        cpu = "max"
        if self.cxl:
            machine, cpu = self.cxl.machine(), self.cxl.cpu()
            append += f" {self.cxl.cmdline()}".rstrip()
        cmd = [find_qemu(), "-machine", machine,
               "-accel", "tcg,tb-size=64", "-cpu", cpu, "-smp", "1",
               "-m", (f"{self.memory},slots=2,maxmem=4G" if self.nvdimm or self.virtio_pmem
                      else self.memory),
               "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
               "-kernel", self.vmlinux, "-initrd", self.initrd, "-append", append]
        ro = ",readonly=on" if self.shared_image else ""
        sh = ",share=on" if self.share else ""
        if self.nvdimm:
            dimm = "nvdimm,id=nvdimm1,memdev=mem1"
            if self.label_size:
                dimm += f",label-size={self.label_size}"
            if self.shared_image:
                dimm += ",unarmed=on"  # the guest's region is read-only too
            cmd += ["-object", f"memory-backend-file,id=mem1{sh}{ro},"
                               f"mem-path={self.nvdimm_path},size={self.nvdimm_size}",
                    "-device", dimm]
        if self.virtio_pmem:
            cmd += ["-object", f"memory-backend-file,id=vpm0{sh}{ro},"
                               f"mem-path={self.vpmem_path},size={self.nvdimm_size}",
                    "-device", "virtio-pmem-pci,memdev=vpm0,id=vpmem0"]
        if self.cxl:
            cmd += self.cxl.qemu_args(self.dir)
        if self.disk:
            cmd += ["-drive", f"file={self.disk},format=raw,if=none,id=disk0{ro}",
                    "-device", "virtio-blk-pci,drive=disk0"]
        # With CXL host bridges QEMU would plug the ports' controller into
        # one (only bridges fit there): the root bus, named.
        cmd += ["-device", "virtio-serial,bus=pcie.0" if self.cxl else "virtio-serial",
                "-chardev", f"socket,path={self.agent_sock},server=on,wait=off,id=ch0",
                "-device", f"virtserialport,chardev=ch0,name={AGENT_PORT}",
                "-chardev", f"file,path={self.results_path},id=ch1",
                "-device", f"virtserialport,chardev=ch1,name={RESULTS_PORT}",
                "-chardev", f"socket,path={self.control_sock},server=on,wait=off,id=ch2",
                "-device", f"virtserialport,chardev=ch2,name={CONTROL_PORT}"]
        if self.virtiofsd:
            cmd += self.virtiofsd.qemu_args(self.memory)
        for i, (name, path) in enumerate(self.extra_ports.items()):
            cmd += ["-chardev", f"socket,path={path},server=on,wait=off,id=chx{i}",
                    "-device", f"virtserialport,chardev=chx{i},name={name}"]
        return cmd

    def __enter__(self):
        # A caller may have put a prepared backing file there (the appliance).
        for path, wanted in ((self.nvdimm_path, self.nvdimm or self.virtio_pmem),
                             (self.vpmem_path, self.virtio_pmem)):
            if wanted and not os.path.exists(path):
                with open(path, "wb") as f:
                    f.truncate(_size_bytes(self.nvdimm_size))
        for path, size in self._cxl_files().items():
            with open(path, "wb") as f:
                f.truncate(_size_bytes(size))
        if self.virtiofsd:
            self.virtiofsd.start(Skip, GuestError)
        cmd = self.command()
        with open(os.path.join(self.dir, "qemu-cmd.txt"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, cwd=self.dir,
                                     preexec_fn=_die_with_parent)
        self.reader = threading.Thread(target=self._read_console, daemon=True)
        self.reader.start()
        return self

    def _read_console(self):
        # Read promptly: a slow reader of the serial console slows the guest.
        with open(self.console_path, "wb") as log:
            fd = self.proc.stdout.fileno()
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                log.write(chunk)
                log.flush()
                lines = self.console.feed(chunk)
                if not self.done.is_set() and DONE_MARKER in lines:
                    self.t_done = time.monotonic()
                    self.done.set()
        self.console.close()

    def wait(self, timeout):
        """Wait for QEMU to exit (the guest powers off after shipping). QEMU is
        reaped with wait4 so its resource usage (peak RSS) is kept."""
        import select
        if self.proc.returncode is None:  # else already reaped (a poll() saw it die)
            pidfd = os.pidfd_open(self.proc.pid)
            try:
                ready, _, _ = select.select([pidfd], [], [], timeout)
            finally:
                os.close(pidfd)
            if not ready:
                raise GuestError(f"guest did not finish within {timeout:.0f} s "
                                 f"(done marker seen: {self.done.is_set()})")
            _, status, self.rusage = os.wait4(self.proc.pid, 0)
            self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.t_exit = time.monotonic()
        self.reader.join(timeout=10)
        if not self.done.is_set():
            raise GuestError(f"QEMU exited (rc={self.proc.returncode}) without the "
                             f"{DONE_MARKER.decode()} marker")

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
            if self.proc.stdout:
                self.reader.join(timeout=10)
                self.proc.stdout.close()
        if self.virtiofsd:
            self.virtiofsd.stop()
            if self.virtiofs_owned:
                shutil.rmtree(self.virtiofsd.shared_dir, ignore_errors=True)
        # The backing file is up to 512M of real data after mkfs: never keep it.
        for path in ({self.nvdimm_path, self.vpmem_path} | set(self._cxl_files())) - {
                self.shared_image}:
            if os.path.exists(path):
                os.unlink(path)
        if not self.keep and exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def _cxl_files(self):
        return self.cxl.backing_files(self.dir) if self.cxl else {}

    def connect_agent(self, timeout=30.0):
        """A connected socket on org.daxprobe.agent.0 (for host actors)."""
        return self._connect(self.agent_sock, AGENT_PORT, timeout)

    def connect_port(self, name, timeout=30.0):
        """A connected socket on one of the extra_ports."""
        return self._connect(self.extra_ports[name], name, timeout)

    def tell_guest(self, line, timeout=30.0):
        """Send one line on org.daxprobe.control: the guest's `wait_host`
        returns it. QEMU holds it if the guest has not opened the port yet.
        May be called again: each call waits for its own acknowledgement."""
        said = self.console.count(b"DAXPROBE-HOST-SAID")
        s = self._connect(self.control_sock, CONTROL_PORT, timeout)
        with s:
            s.sendall(line.encode() + b"\n")
            # Stay connected until the guest has read it: a close could make
            # the guest's read return 0 before the data; its DAXPROBE-HOST-SAID
            # console line says it has it.
            self.wait_console("DAXPROBE-HOST-SAID", said + 1, timeout)

    def _connect(self, path, port, timeout):
        """QEMU creates the listening socket during its start-up, shortly after
        Popen returns."""
        return connect_when_listening(path, self.proc, f"{port}", timeout)

    def wait_console(self, text, count=1, timeout=60.0):
        """Block until `text` appeared `count` times in complete console lines
        (woken by the reader thread, no polling); GuestError on timeout or
        QEMU exit."""
        self.console.wait_count(text.encode(), count, timeout)

    def console_count(self, text):
        """How often `text` appeared in complete console lines so far."""
        return self.console.count(text.encode())

    def wait_console_match(self, pattern, timeout=60.0):
        """The match of the regex `pattern` (bytes) in the first complete
        console line it matches (console_lines.py: never a partial line)."""
        return self.console.wait_match(pattern, timeout)

    def console_text(self):
        return self.console.text()

    # -- results ---------------------------------------------------------------
    def results(self):
        """The guest's /results folder as {relative path: bytes}."""
        data = open(self.results_path, "rb").read() if os.path.exists(self.results_path) else b""
        head = b"DAXPROBE-RESULTS "
        start = data.find(head)
        if start < 0:
            raise GuestError(f"no results frame on {RESULTS_PORT} ({len(data)} bytes)")
        nl = data.index(b"\n", start)
        size = int(data[start + len(head):nl])
        body = data[nl + 1:nl + 1 + size]
        trailer = data[nl + 1 + size:nl + 1 + size + 21]
        if len(body) != size or trailer != b"\nDAXPROBE-RESULTS-END":
            raise GuestError(f"truncated results frame: {len(body)}/{size} bytes, "
                             f"trailer {trailer!r}")
        files = {}
        with tarfile.open(fileobj=io.BytesIO(body)) as tar:
            for m in tar.getmembers():
                if m.isfile():
                    name = m.name[len("results/"):] if m.name.startswith("results/") else m.name
                    files[name] = tar.extractfile(m).read()
        return files


def _die_with_parent():
    # Even a SIGKILLed harness must not leave a QEMU behind.
    import ctypes
    import signal
    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _size_bytes(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)

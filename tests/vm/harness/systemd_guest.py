"""Boot a real Debian guest (debian_image.py) under QEMU/TCG: systemd as PID 1,
udev, the image's own kernel and initramfs, an emulated NVDIMM.

The host asks the guest through the test bed's shell on org.daxprobe.testbed.0
(`guest.sh(cmd)` -> (status, output)); QMP (`guest.qmp(...)`) adds and removes
devices; the console is read continuously into console.log and can be waited
on, in whole lines only (console_lines.py). QEMU is always killed and reaped (context manager).
"""

import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

from .console_lines import Console
from .guest import AGENT_PORT, GuestError, Skip, TestBedError, _die_with_parent, \
    connect_when_listening, find_qemu

TESTBED_PORT = "org.daxprobe.testbed.0"


def image_inputs(image_dir):
    """The built image's facts; TestBedError naming the step that failed
    (Skip only for a fault of the machine, e.g. not root)."""
    target = f"{os.path.basename(image_dir)}-image"
    info_path = os.path.join(image_dir, "image.json")
    if not os.path.exists(info_path):
        raise TestBedError(target, f"no {info_path} (meson compile -C BUILDDIR {target})")
    info = json.load(open(info_path))
    if info.get("error"):
        if info.get("machine_fault"):
            raise Skip(f"machine fault: {info['error']}")
        raise TestBedError(f"{target}: {info.get('step', 'the image build')}", info["error"])
    return info


class SystemdGuest:
    """root: "disk" (ext4 on virtio-blk, read-only image + a throwaway overlay),
    "pmem" (the image's pmem-root.img as the NVDIMM's backing file: a raw
    namespace, so /dev/pmem0 is the XFS root) or "pmem-fsdax" (its
    pmem-fsdax-root.img: an fsdax namespace holding that XFS root). agent_port:
    the agent's port exists at boot; its chardev exists either way, so QMP can
    add it later. nvdimm_file: a backing file of the caller's, written by the
    guest (the disk root only)."""

    def __init__(self, image_dir, name, *, root="disk", cmdline="", agent_port=True,
                 nvdimm=True, nvdimm_file=None, memory="768M", initrd="initrd.img",
                 keep=False):
        self.image_dir = os.path.abspath(image_dir)
        self.name = name
        self.root = root
        self.cmdline = cmdline
        self.agent_port = agent_port
        self.nvdimm = nvdimm
        self.nvdimm_file = nvdimm_file
        self.memory = memory
        self.initrd = initrd
        self.keep = keep
        self.dir = tempfile.mkdtemp(prefix=f"dxsd-{name[:12]}-")
        self.console_path = os.path.join(self.dir, "console.log")
        self.agent_sock = os.path.join(self.dir, "agent.sock")
        self.testbed_sock = os.path.join(self.dir, "testbed.sock")
        self.qmp_sock = os.path.join(self.dir, "qmp.sock")
        self.proc = None
        self.console = Console(GuestError)
        self.shell = None
        self.shell_buf = b""
        self.qmp_file = None
        self.token = 0
        self.t_start = None

    def command(self):
        append = "console=ttyS0 no_timer_check panic=-1 rw"
        cmd = [find_qemu(), "-machine", "pc,nvdimm=on" if self.nvdimm else "pc",
               "-accel", os.environ.get("DAXPROBE_QEMU_ACCEL", "tcg,tb-size=128"),
               "-cpu", "max", "-smp", "1",
               "-m", f"{self.memory},slots=2,maxmem=8G" if self.nvdimm else self.memory,
               "-nographic", "-no-reboot", "-nodefaults", "-serial", "stdio",
               "-qmp", f"unix:{self.qmp_sock},server=on,wait=off",
               "-kernel", os.path.join(self.image_dir, "vmlinux"),
               "-initrd", os.path.join(self.image_dir, self.initrd)]
        if self.root == "disk":
            append += " root=/dev/vda"
            cmd += ["-drive", f"file={os.path.join(self.image_dir, 'disk.img')},format=raw,"
                              "if=none,id=disk0,snapshot=on",
                    "-device", "virtio-blk-pci,drive=disk0"]
        if self.nvdimm:
            if self.root in ("pmem", "pmem-fsdax"):
                # share=off: the guest's writes stay in QEMU's memory, the image
                # is shared by every boot and never changes.
                image = "pmem-root.img" if self.root == "pmem" else "pmem-fsdax-root.img"
                path, size, share = os.path.join(self.image_dir, image), None, "off"
                append += " root=/dev/pmem0 rootfstype=xfs rootflags=dax=always"
            elif self.nvdimm_file:
                path, size, share = self.nvdimm_file, None, "on"
            else:
                path, size, share = os.path.join(self.dir, "nvdimm.img"), 512 << 20, "on"
                with open(path, "wb") as f:
                    f.truncate(size)
            size = size or os.path.getsize(path)
            cmd += ["-object", f"memory-backend-file,id=mem1,share={share},mem-path={path},"
                               f"size={size}",
                    "-device", "nvdimm,id=nvdimm1,memdev=mem1"]
        cmd += ["-device", "virtio-serial,id=vser0",
                "-chardev", f"socket,path={self.testbed_sock},server=on,wait=off,id=tb",
                "-device", f"virtserialport,chardev=tb,name={TESTBED_PORT}",
                "-chardev", f"socket,path={self.agent_sock},server=on,wait=off,id=agentch"]
        if self.agent_port:
            cmd += ["-device", self.agent_port_device()]
        if self.cmdline:
            append += " " + self.cmdline
        return cmd + ["-append", append]

    @staticmethod
    def agent_port_device():
        return f"virtserialport,chardev=agentch,name={AGENT_PORT},id=agentport,bus=vser0.0"

    def __enter__(self):
        cmd = self.command()
        with open(os.path.join(self.dir, "qemu-cmd.txt"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        self.t_start = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, cwd=self.dir,
                                     preexec_fn=_die_with_parent)
        threading.Thread(target=self._read_console, daemon=True).start()
        return self

    def _read_console(self):
        with open(self.console_path, "wb") as log:
            fd = self.proc.stdout.fileno()
            while chunk := os.read(fd, 65536):
                log.write(chunk)
                log.flush()
                self.console.feed(chunk)
        self.console.close()

    def __exit__(self, *exc):
        for f in (self.shell, self.qmp_file):
            if f:
                f.close()
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
            self.proc.stdout.close()
        nv = os.path.join(self.dir, "nvdimm.img")
        if os.path.exists(nv):
            os.unlink(nv)
        if not self.keep and exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    # -- console ---------------------------------------------------------------
    def console_text(self):
        return self.console.text()

    def wait_console(self, pattern, timeout):
        """The match of the regex (bytes) in the first complete console line
        it matches: never a line still arriving (console_lines.py)."""
        return self.console.wait_match(pattern, timeout)

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise GuestError(f"QEMU still running after {timeout} s")

    # -- the test bed's shell --------------------------------------------------
    def connect_shell(self, timeout):
        """Connect to the guest's shell; returns the seconds from QEMU's start
        until the shell answered (systemd has started it: udev saw its port)."""
        self.shell = connect_when_listening(self.testbed_sock, self.proc, TESTBED_PORT, 30)
        self.sh("true", timeout=timeout)
        return time.monotonic() - self.t_start

    def sh(self, command, timeout=120, check=False):
        """Run `command` with /bin/sh in the guest: (exit status, output)."""
        self.token += 1
        token = f"t{self.token}"
        self.shell.sendall(f"{token} {command}\n".encode())
        # Up to its newline: the whole status, never a digit still arriving.
        end = re.compile(rb"@@RC " + token.encode() + rb" (\d+)\n")
        deadline = time.monotonic() + timeout
        while not (m := end.search(self.shell_buf)):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                raise GuestError(f"guest shell: no answer to {command!r} "
                                 f"({'QEMU exited' if self.proc.poll() is not None else f'{timeout} s'})")
            self.shell.settimeout(left)
            try:
                chunk = self.shell.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                chunk = b""
            if not chunk:
                raise GuestError(f"guest shell closed while running {command!r}")
            self.shell_buf += chunk
        out = self.shell_buf[:m.start()].decode(errors="replace")
        self.shell_buf = self.shell_buf[m.end():]
        rc = int(m.group(1))
        if check and rc != 0:
            raise GuestError(f"guest: {command!r} exited {rc}:\n{out}")
        return rc, out

    def show(self, unit, *props):
        """systemctl show UNIT -p ...: {property: value}."""
        _, out = self.sh(f"systemctl show {unit} " + " ".join(f"-p {p}" for p in props))
        return dict(line.split("=", 1) for line in out.splitlines() if "=" in line)

    def wait_unit(self, unit, state, timeout=120):
        """Until UNIT's ActiveState is `state` (a string, or a tuple of the
        states that end the wait): a bounded wait in the guest for systemd to
        act on a udev event; returns the seconds it took."""
        states = (state,) if isinstance(state, str) else tuple(state)
        t0 = time.monotonic()
        rc, out = self.sh(f"end=$(($(date +%s) + {timeout})); "
                          f"until case $(systemctl show -P ActiveState {unit}) in "
                          f"{'|'.join(states)}) true;; *) false;; esac || "
                          f"[ $(date +%s) -ge $end ]; do sleep 0.2; done; "
                          f"systemctl show -P ActiveState {unit}", timeout=timeout + 60)
        if out.strip() not in states:
            raise GuestError(f"{unit} is {out.strip()!r}, not {' or '.join(states)} "
                             f"after {timeout} s")
        return time.monotonic() - t0

    def wait_logged(self, unit, text, timeout=120):
        """Until the journal of UNIT's current invocation holds `text` (a
        fixed string): a bounded wait in the guest."""
        rc, out = self.sh(f"end=$(($(date +%s) + {timeout})); "
                          f"while ! journalctl -o cat --no-pager _SYSTEMD_INVOCATION_ID="
                          f"$(systemctl show -P InvocationID {unit}) | grep -qF '{text}' && "
                          f"[ $(date +%s) -lt $end ]; do sleep 0.2; done; "
                          f"journalctl -o cat --no-pager _SYSTEMD_INVOCATION_ID="
                          f"$(systemctl show -P InvocationID {unit}) | grep -F '{text}'",
                          timeout=timeout + 60)
        if rc != 0:
            raise GuestError(f"{unit}: {text!r} not in its journal after {timeout} s")

    # -- QMP -------------------------------------------------------------------
    def qmp(self, execute, **arguments):
        if self.qmp_file is None:
            s = connect_when_listening(self.qmp_sock, self.proc, "QMP", 30)
            self.qmp_file = s.makefile("rw")
            self._qmp_line()  # greeting
            self._qmp_send("qmp_capabilities")
        return self._qmp_send(execute, **arguments)

    def _qmp_line(self):
        """One whole QMP line; a piece without a newline is QEMU gone."""
        line = self.qmp_file.readline()
        if not line.endswith("\n"):
            raise GuestError(f"QMP closed (QEMU exited?) after {line[:200]!r}")
        return json.loads(line)

    def _qmp_send(self, execute, **arguments):
        msg = {"execute": execute}
        if arguments:
            msg["arguments"] = arguments
        self.qmp_file.write(json.dumps(msg) + "\n")
        self.qmp_file.flush()
        while True:
            reply = self._qmp_line()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                raise GuestError(f"QMP {execute}: {reply['error']}")
            # asynchronous events are skipped here

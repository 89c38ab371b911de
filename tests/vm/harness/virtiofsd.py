"""QEMU 7.2's virtiofsd sharing one host folder into a guest (virtio-fs).

The daemon is the vhost-user backend of `-device vhost-user-fs-pci`: QEMU
connects to its socket at start-up, so the daemon must be listening first
(it says so on stderr), and it exits when QEMU disconnects. The guest's RAM
must be a shared memfd for the daemon to reach the guest's buffers.
"""

import os
import select
import shutil
import subprocess
import time

VIRTIOFSD = "/usr/lib/qemu/virtiofsd"  # Debian's qemu-system-common
LISTENING = b"Waiting for vhost-user socket connection"


class Virtiofsd:
    def __init__(self, shared_dir, sock, tag, cache="auto"):
        self.shared_dir = shared_dir
        self.sock = sock
        self.tag = tag
        self.cache = cache
        self.proc = None
        self.log = b""

    def qemu_args(self, memory):
        """The memfd RAM (the daemon maps the guest's buffers) and the device."""
        return ["-object", f"memory-backend-memfd,id=ram0,size={memory},share=on",
                "-numa", "node,memdev=ram0",
                "-chardev", f"socket,id=vfs0,path={self.sock}",
                "-device", f"vhost-user-fs-pci,chardev=vfs0,tag={self.tag}"]

    def start(self, skip, error, timeout=30.0):
        """Start the daemon and return once it listens (its stderr line)."""
        if not os.access(VIRTIOFSD, os.X_OK):
            raise skip(f"{VIRTIOFSD} not found (apt-get install qemu-system-common)")
        self.proc = subprocess.Popen(
            [VIRTIOFSD, f"--socket-path={self.sock}", "-o", f"source={self.shared_dir}",
             "-o", f"cache={self.cache}", "-o", "sandbox=chroot"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        fd = self.proc.stderr.fileno()
        deadline = time.monotonic() + timeout
        while LISTENING not in self.log:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            chunk = os.read(fd, 4096) if ready else b""
            if not chunk:
                self.stop()
                raise error(f"virtiofsd did not listen on {self.sock}: {self.log.decode()!r}")
            self.log += chunk

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
        if self.proc:
            self.proc.wait()
            self.proc.stderr.close()


def shared_folder(path, files):
    """A fresh folder for the guest: {name: size in bytes} of random data (a
    read must move real data, not zero pages)."""
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    for name, size in files.items():
        with open(os.path.join(path, name), "wb") as f:
            left = size
            while left:
                n = min(left, 1 << 20)
                f.write(os.urandom(n))
                left -= n
    return path

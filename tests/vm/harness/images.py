"""The images a test-bed guest boots from, as the build left them: the
guest kernel's record and an initramfs, or TestBedError naming the step
that failed."""

import json
import os

from .guest import TestBedError

# /init and the scenario snippets every test-bed initramfs holds.
GUEST_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "guest")

# The kernel tags meson.build builds images for, and their file-name suffix
# (6.1's files keep their plain names).
# nfit: Debian 12's kernel with the NVDIMM test bus (nfit_test_build.py).
KERNEL_SUFFIX = {"6.1": "", "6.12": "-6.12", "sid": "-sid", "nfit": "-nfit"}


def guest_inputs(vm_dir, kernel="6.1", image=None):
    """The kernel info and the initramfs (default: the package-built one of
    `kernel`; image: another one in vm_dir, such as the demo's)."""
    sfx = KERNEL_SUFFIX[kernel]
    info_path = os.path.join(vm_dir, f"kernel{sfx}.json")
    initrd = os.path.abspath(os.path.join(vm_dir, image or f"initramfs{sfx}.cpio"))
    if not os.path.exists(info_path) or not os.path.exists(initrd):
        raise TestBedError(f"guest-kernel{sfx}/guest-initramfs{sfx}",
                           f"no {info_path} or {initrd} (meson compile -C BUILDDIR "
                           f"guest-initramfs{sfx})")
    info = json.load(open(info_path))
    if not info.get("available"):
        raise TestBedError(f"guest-kernel{sfx} (guest_kernel.py)",
                           info.get("reason") or "guest kernel unavailable")
    if os.path.getsize(initrd) == 0:
        raise TestBedError(f"guest-initramfs{sfx}", f"{initrd} is empty (the guest kernel was "
                           f"unavailable when it was built)")
    return info, initrd

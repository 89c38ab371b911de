"""The VM test bed: boot a guest under QEMU/TCG from the images the build
made, and get its results out. tests/vm (the scenarios) and bench/ (the
benchmarks that boot guests) both import it; neither edits the import path.

  guest          Guest: one QEMU with an NVDIMM, the agent, results and control ports
  systemd_guest  SystemdGuest: a real Debian image, systemd as PID 1
  images         the built kernel and initramfs a boot needs (or TestBedError)
  guest_kernel   build step: Debian's kernel package -> vmlinux + kernel.json
  mkinitramfs    build step: busybox, modules, tools, daxprobe -> initramfs.cpio
  pmem_file      the fsdax info block in a pmem backing file
  console_lines  whole-line waits on a guest's console
  verified_cache the machine-wide cache of checked artefacts

Scripts in tests/vm find it beside them (Python puts a script's folder on
its path); bench/'s scripts and the build steps (`python3 -m
harness.guest_kernel`) get tests/vm on PYTHONPATH from meson or the command
line (bench/README.md).
"""

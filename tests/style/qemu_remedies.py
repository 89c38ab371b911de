#!/usr/bin/env python3
"""Every QEMU option a remedy prints exists in the QEMU on this machine.

A remedy is a command the user runs: `-device vhost-user-fs-pci,cache-size=2G`
fails on a QEMU without that property ("Property '.cache-size' not found").
This reads the product's string literals statement by statement (a remedy is
often built from several literals), takes each `-device TYPE,k=v`,
`-object TYPE,k=v` and `-machine [TYPE,]k=v`, and checks TYPE and every key
against `qemu-system-x86_64 -device TYPE,help` (resp. -object). `-machine
TYPE,help` omits some properties (nvdimm), so a machine key is tried: QEMU
starts stopped (-S) and quits through QMP, or names the unknown property.
"""
import pathlib
import re
import shutil
import subprocess
import sys

QEMU = "qemu-system-x86_64"
PRODUCT_DIRS = ("agent", "base", "collector", "probes", "protocol")
# A char literal first, so that '"' does not open a string.
LITERAL = re.compile(r"'(?:[^'\\\n]|\\.)+'|\"((?:[^\"\\\n]|\\.)*)\"|//[^\n]*|/\*.*?\*/|[;{}]",
                     re.S)
OPTION = re.compile(r"(?<![\w-])-(device|object|machine)\s+([^\s;()'\"]+)")
DEFAULT_MACHINE = "pc"  # what `-machine k=v` without a type refines on x86


def statements(source):
    """The concatenated string literals of each C++ statement."""
    parts = []
    for m in LITERAL.finditer(source):
        tok = m.group(0)
        if tok in (";", "{", "}"):
            if parts:
                yield "".join(parts)
            parts = []
        elif m.group(1) is not None:
            parts.append(m.group(1))
    if parts:
        yield "".join(parts)


def options_in(text):
    """(kind, type, [key=value]) for each QEMU option spelled in text."""
    for kind, spec in OPTION.findall(text):
        fields = [f for f in spec.rstrip(",.").split(",") if f]
        kind_type = None
        if fields and "=" not in fields[0]:
            kind_type = fields.pop(0)
        elif kind == "machine":
            kind_type = DEFAULT_MACHINE
        if kind_type:
            yield kind, kind_type, [f for f in fields if "=" in f]


def known_keys(kind, kind_type, cache={}):
    """The property names QEMU lists for kind_type, or None if it has no such type."""
    if (kind, kind_type) not in cache:
        run = subprocess.run([QEMU, "-" + kind, kind_type + ",help", "-nodefaults"],
                             capture_output=True, text=True, timeout=60)
        out = run.stdout + run.stderr
        keys = set(re.findall(r"^\s+([\w.-]+)=<", out, re.M))
        cache[(kind, kind_type)] = keys if run.returncode == 0 and keys else None
    return cache[(kind, kind_type)]


def machine_accepts(kind_type, field):
    run = subprocess.run([QEMU, "-machine", f"{kind_type},{field}", "-accel", "tcg",
                          "-nodefaults", "-display", "none", "-S", "-qmp", "stdio"],
                         input='{"execute":"qmp_capabilities"}\n{"execute":"quit"}\n',
                         capture_output=True, text=True, timeout=60)
    return run.returncode == 0


def missing(kind, kind_type, fields):
    have = known_keys(kind, kind_type)
    if have is None:
        return [f"{QEMU} has no such type"]
    have |= {"id"} if kind == "object" else set()  # every -object takes id
    return [f"no property '{f.split('=')[0]}'" for f in fields
            if f.split("=")[0] not in have and not (kind == "machine" and
                                                    machine_accepts(kind_type, f))]


def main(root):
    if shutil.which(QEMU) is None:
        print(f"SKIP: {QEMU} is not installed")
        return 77
    root = pathlib.Path(root)
    seen, bad = 0, []
    for d in PRODUCT_DIRS:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in (".cpp", ".h"):
                continue
            for stmt in statements(path.read_text()):
                for kind, kind_type, fields in options_in(stmt):
                    seen += 1
                    where = f"{path.relative_to(root)}: -{kind} {kind_type}"
                    bad += [f"{where}: {m}" for m in missing(kind, kind_type, fields)]
    if seen == 0:
        print("FAIL: no QEMU option found in the product's strings: the scan is broken")
        return 1
    for b in bad:
        print("FAIL:", b)
    print(f"{seen} QEMU options checked against {QEMU}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

#!/usr/bin/env python3
"""What an operator reaches for first, on the binaries just built:
- `--version` exits 0 and names the project version (both programs);
- the bash completion offers exactly the subcommands and options
  `--help-all` lists (it is a static list, so this keeps it in step);
- the generated man pages exist, are roff with the NAME and the options;
- a walk bound out of range is a clear error (exit 2, the option named).
Usage: test_cli.py VERSION COMPLETION_DIR PROG=BINARY=MANPAGE..."""
import re
import shutil
import subprocess
import sys


def help_all(binary):
    """{subcommand or '': set of options} from CLI11's --help-all."""
    out = subprocess.run([binary, "--help-all"], capture_output=True, text=True, check=True).stdout
    opts, sub, in_subs = {"": set()}, "", False
    for line in out.splitlines():
        if line.startswith("Subcommands:"):
            in_subs = True
            continue
        if in_subs and re.match(r"^[a-z][\w-]*$", line):
            sub = line
            opts[sub] = set()
            continue
        m = re.match(r"^\s+(-\S+)", line)
        if m:
            first_col = re.split(r"\s{2,}", line.strip())[0].split(" ")[0]
            opts[sub].update(t for t in first_col.split(",") if t.startswith("-"))
    return opts


def complete(script, func, words):
    """COMPREPLY of the completion function for the command line `words`
    (the last word is the one being completed)."""
    line = " ".join(words)
    cmd = (f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
           f"{func}; printf '%s\\n' \"${{COMPREPLY[@]}}\"")
    if words[-1] == "":
        cmd = cmd.replace(f"COMP_WORDS=({line})", f"COMP_WORDS=({line} '')")
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=True)
    return set(filter(None, r.stdout.splitlines()))


def bad_walk_bounds(binary):
    """`--walk-files`/`--walk-ms` out of range or not a number: exit 2 and an
    error naming the option, for each command that takes them."""
    failures = []
    for sub in ("check", "agent"):
        for opt, value in (("--walk-files", "0"), ("--walk-files", "many"), ("--walk-ms", "0"),
                           ("--walk-ms", "3600001"), ("--walk-ms", "-5")):
            r = subprocess.run([binary, sub, opt, value], capture_output=True, text=True,
                               timeout=30)
            if r.returncode != 2 or opt not in r.stderr:
                failures.append(f"daxprobe {sub} {opt} {value}: rc {r.returncode}, "
                                f"stderr {r.stderr.strip()!r} (want 2 and the option named)")
    return failures


def main():
    version, compdir, progs = sys.argv[1], sys.argv[2], sys.argv[3:]
    if not shutil.which("bash"):
        print("SKIP: bash not found")
        sys.exit(77)
    failures = []
    for spec in progs:
        prog, binary, manpage = spec.split("=", 2)
        r = subprocess.run([binary, "--version"], capture_output=True, text=True)
        print(f"{prog} --version: rc {r.returncode}: {r.stdout.strip()}")
        if r.returncode != 0 or not r.stdout.startswith(version):
            failures.append(f"{prog} --version: rc {r.returncode}, {r.stdout!r} (want {version}...)")

        opts = help_all(binary)
        subs = sorted(s for s in opts if s)
        if not subs:
            failures.append(f"{prog} --help-all lists no subcommands")
        script = f"{compdir}/{prog}"
        func = "_" + prog.replace("-", "_")
        # Short aliases (-h, -o) are completed only when typed: compare the rest.
        top = {w for w in complete(script, func, [prog, ""]) if not re.match(r"^-\w$", w)}
        want_top = {w for w in set(subs) | opts[""] if not re.match(r"^-\w$", w)}
        if top != want_top:
            failures.append(f"{prog} completion at the top: {sorted(top)} != --help-all {sorted(want_top)}")
        for sub in subs:
            got = complete(script, func, [prog, sub, "-"])
            want = opts[sub] | {"--help"}
            got_long = {o for o in got if o.startswith("--")}
            want_long = {o for o in want if o.startswith("--")}
            if got_long != want_long:
                failures.append(f"{prog} {sub}: completion {sorted(got_long)} != "
                                f"--help-all {sorted(want_long)}")

        if prog == "daxprobe":
            failures += bad_walk_bounds(binary)

        text = open(manpage).read()
        if not text.startswith(".\\\"") and ".TH" not in text:
            failures.append(f"{manpage} is not a man page")
        for needle in (f".TH {prog.upper()} \"8\"", ".SH NAME", ".SH \"EXIT STATUS\"", "\\-\\-version"):
            if needle not in text:
                failures.append(f"{manpage} lacks {needle!r}")
        for sub in subs:
            for o in opts[sub]:
                if o.startswith("--") and o.replace("-", "\\-") not in text:
                    failures.append(f"{manpage} does not mention {sub} {o}")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

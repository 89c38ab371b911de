"""Host-side assertions over the workload commands a guest ran:
`daxprobe exercise` (exercise.json) and `daxprobe profile -- CMD`
(profile-dd.json, profile-cmd.json). Used by scenarios.py; test_checks.py
proves each can fail.
"""

MiB = 1 << 20


EXERCISE_PHASES = ["read", "mmap_read", "mmap_write"]


def exercise_of(c, res):
    """exercise.json (daxprobe exercise --json), its phases checked to be there."""
    doc = res.json("exercise.json")
    if not c.check(doc is not None and doc.get("schema") == "daxprobe.exercise/1",
                   "exercise.json: one daxprobe.exercise/1 document:\n" + res.text("exercise.json")[:1500]
                   + res.text("exercise.stderr")[:500]):
        return None
    c.eq(res.rc("exercise.rc"), 0, "daxprobe exercise exit code")
    c.eq(doc.get("removed"), True, "exercise removed its file")
    c.eq([p.get("name") for p in doc.get("phases") or []], EXERCISE_PHASES, "exercise phases")
    c.eq(doc.get("size"), 32 * MiB, "exercise file size")
    return doc


def expect_exercise_dax(c, res, pmd):
    """DAX: no phase grows the page cache; the mappings take DAX faults, all
    2 MiB (pmd=True: a fallocated file on 2 MiB stripe units) or at least counted."""
    doc = exercise_of(c, res)
    if doc is None:
        return
    c.eq(doc.get("dax"), True, "exercise file is DAX")
    c.eq((doc.get("footprint") or {}).get("code"), "no_page_cache", "exercise footprint")
    for p in doc["phases"]:
        name, f = p["name"], p.get("faults") or {}
        d = p.get("cached_kb_delta")
        c.check(isinstance(d, int) and d < 4096, f"exercise {name}: Cached delta {d} kB < 4096 on DAX")
        c.eq((p.get("footprint") or {}).get("code"), "no_page_cache", f"exercise {name} footprint")
        c.eq((p.get("page_cache_after") or {}).get("method"), "not_applicable_dax",
             f"exercise {name}: no residency call on a DAX file")
        if name == "read":
            continue
        pmd_n, fb, pte = f.get("dax_pmd"), f.get("dax_pmd_fallback"), f.get("dax_pte")
        c.check(isinstance(pmd_n, int) and isinstance(pte, int),
                f"exercise {name}: fs_dax counted ({f.get('tracepoint_error')})")
        if pmd:
            # 32 MiB in 2 MiB faults: 16 (a write fault on a read-only PMD may add one per extent).
            c.check(isinstance(pmd_n, int) and 16 <= pmd_n <= 32,
                    f"exercise {name}: {pmd_n} PMD faults for 32 MiB (want 16..32)")
            c.eq(fb, 0, f"exercise {name}: PMD fallbacks")
            c.eq(pte, 0, f"exercise {name}: PTE faults")
        else:
            c.check((pmd_n or 0) + (pte or 0) > 0, f"exercise {name}: DAX faults counted: {f}")


def expect_exercise_page_cache(c, res):
    """Not DAX: every phase grows Cached, and the file's residency, by ~its size."""
    doc = exercise_of(c, res)
    if doc is None:
        return
    c.eq(doc.get("dax"), False, "exercise file is not DAX")
    c.eq((doc.get("footprint") or {}).get("code"), "page_cache", "exercise footprint")
    for p in doc["phases"]:
        name = p["name"]
        d = p.get("cached_kb_delta")
        c.check(isinstance(d, int) and d >= 30 * 1024,
                f"exercise {name}: Cached grew by {d} kB (want >= 30 MiB for 32 MiB)")
        before = (p.get("page_cache_before") or {}).get("resident_bytes")
        after = (p.get("page_cache_after") or {}).get("resident_bytes")
        c.check(before is not None and before < 4 * MiB,
                f"exercise {name}: file resident before {before} < 4 MiB (cache dropped)")
        c.check(after is not None and after >= 30 * MiB,
                f"exercise {name}: file resident after {after} >= 30 MiB")
        c.eq((p.get("footprint") or {}).get("code"), "page_cache", f"exercise {name} footprint")
        c.check((p.get("faults") or {}).get("dax_pmd") in (None, 0), f"exercise {name}: no DAX PMD faults")


def command_of(c, res, name):
    """The "command" object of NAME.json (daxprobe profile --json -- CMD)."""
    doc = res.json(name + ".json")
    cmd = (doc or {}).get("command")
    if not c.check(doc is not None and doc.get("schema") == "daxprobe.profile/1" and cmd is not None,
                   f"{name}.json: a daxprobe.profile/1 command document:\n" + res.text(name + ".json")[:1500]
                   + res.text(name + ".stderr")[:500]):
        return None
    c.eq(res.rc(name + ".rc"), 0, f"{name}: daxprobe profile exit code (the command's)")
    c.eq(cmd.get("exit_status"), 0, f"{name}: the command's exit status")
    c.eq((cmd.get("faults") or {}).get("source"), "perf", f"{name}: faults counted by perf")
    return cmd


def expect_profile_dd(c, res, dax):
    """dd reading the 32 MiB test file after dropping caches."""
    cmd = command_of(c, res, "profile-dd")
    if cmd is None:
        return
    pc = cmd.get("page_cache") or {}
    d = pc.get("cached_kb_delta")
    files = pc.get("files") or []
    if not c.check(len(files) == 1, f"profile-dd: one --path file: {files}"):
        return
    f = files[0]
    if dax:
        c.check(isinstance(d, int) and d < 4096, f"profile-dd: Cached delta {d} kB < 4096 on DAX")
        c.eq(f.get("method"), "not_applicable_dax", "profile-dd: residency method of a DAX file")
    else:
        c.check(isinstance(d, int) and d >= 30 * 1024, f"profile-dd: Cached grew by {d} kB (want >= 30 MiB)")
        c.check(f.get("method") in ("cachestat", "mincore"), f"profile-dd: residency method {f.get('method')}")
        before, after = f.get("resident_bytes_before"), f.get("resident_bytes_after")
        c.check(before is not None and before < 4 * MiB, f"profile-dd: resident before {before} < 4 MiB")
        c.check(after is not None and after >= 30 * MiB, f"profile-dd: resident after {after} >= 30 MiB")


def expect_profile_cmd(c, res, outcome):
    """A child process mapping a file: its fs_dax faults reach the outer
    profile through inherit. outcome "pmd": all 2 MiB; "fallback": 2 MiB
    faults fell back and 4 KiB (PTE) faults served the mapping."""
    cmd = command_of(c, res, "profile-cmd")
    if cmd is None:
        return
    f = cmd.get("faults") or {}
    pmd, fb, pte = f.get("dax_pmd"), f.get("dax_pmd_fallback"), f.get("dax_pte")
    if not c.check(all(isinstance(x, int) for x in (pmd, fb, pte)),
                   f"profile-cmd: fs_dax counted: {f.get('tracepoint_error')}"):
        return
    if outcome == "pmd":
        c.check(16 <= pmd <= 32, f"profile-cmd: {pmd} PMD faults for 32 MiB (want 16..32)")
        c.eq((fb, pte), (0, 0), "profile-cmd: (PMD fallbacks, PTE faults)")
    else:
        c.check(fb > 0, f"profile-cmd: PMD fallbacks {fb} > 0 on the dd-written ext4 file")
        c.check(pte > 0, f"profile-cmd: PTE faults {pte} > 0 on the dd-written ext4 file")
    expect_rss_note(c, res, cmd, pmd - min(pmd, fb), pte)


def expect_rss_note(c, res, cmd, pmd_mapped, pte):
    """Issue 44, item 4: peak_rss_without_dax against the kernel's own
    numbers in this guest. The pages the command mapped through DAX (2 MiB
    per PMD fault that did not fall back, 4 KiB per PTE fault) were left out
    of RSS exactly when peak RSS is below half of them (Debian's 6.1: 64 MiB
    written through DAX, peak RSS 1.6 MB); then the note is there, else not."""
    if "peak_rss_without_dax" not in cmd:
        # Captured before profile wrote the field.
        c.check(not res.live, "profile-cmd: no peak_rss_without_dax field")
        return
    note = cmd.get("peak_rss_without_dax")
    mapped = pmd_mapped * (2 << 20) + pte * 4096
    rss = (cmd.get("peak_rss_kb") or 0) * 1024
    left_out = mapped > 0 and rss < mapped // 2
    if not c.check((note is not None) == left_out,
                   f"profile-cmd: peak_rss_without_dax {note} when DAX mapped up to {mapped} "
                   f"bytes and peak RSS is {rss} bytes"):
        return
    if note is not None:
        c.eq(note.get("dax_faults"), pmd_mapped + pte, "profile-cmd: peak_rss_without_dax faults")
        c.eq(note.get("mapped_bytes_up_to"), mapped, "profile-cmd: peak_rss_without_dax bytes")

"""What a pmem backing file holds: the fsdax namespace's info block the
guest's ndctl wrote into it (the fsdax templates, the appliance images)."""

import struct

PFN_MODES = {1: "mem", 2: "dev"}  # enum nd_pfn_mode: PFN_MODE_RAM, PFN_MODE_PMEM


def pfn_info(path):
    """The fsdax namespace's info block in a pmem backing file (struct
    nd_pfn_sb, 4 KiB in): {map: mem|dev (where the struct pages live),
    dataoff, npfns}; None when the file holds none."""
    with open(path, "rb") as f:
        f.seek(4096)
        sb = f.read(80)
    if len(sb) < 80 or sb[:16] != b"NVDIMM_PFN_INFO\0":
        return None
    dataoff, npfns, mode = struct.unpack_from("<QQI", sb, 56)
    return {"map": PFN_MODES.get(mode, f"mode {mode}"), "dataoff": dataoff, "npfns": npfns}


def ext2_uuid(path, offset=0):
    """The UUID of the ext2/3/4 filesystem starting `offset` bytes into
    `path` (superblock at 1024: magic 0xEF53 at 56, s_uuid at 104), as
    `root=UUID=` spells it; None when there is none."""
    with open(path, "rb") as f:
        f.seek(offset + 1024)
        sb = f.read(120)
    if len(sb) < 120 or struct.unpack_from("<H", sb, 56)[0] != 0xEF53:
        return None
    u = sb[104:120].hex()
    return f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}"

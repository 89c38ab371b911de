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

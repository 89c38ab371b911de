#pragma once

#include <string>

#include "tests/unit/probes/temp_tree.h"

// A hand-made /sys/bus/cxl shaped as ../shared/cxl-testbed.md describes the
// test bed's guest (QEMU 7.2: host bridge uid 12 with one root port, mem0 on
// it, a 4 GiB pmem-capable window, region0 committed). The captured trees
// (tests/fixtures/cxl*, test_cxl_fixtures.cpp and "the captured cxl guests
// get their kernel's codes") are the reference; this one stays only for
// what no captured boot shows (decoders_committed with one port, hostile
// trees, a port's decoders made free or full at will).
struct CxlTree : TempTree {
    static constexpr const char *kDevices = "sys/bus/cxl/devices/";

    CxlTree()
    {
        const std::string root = std::string(kDevices) + "root0/";
        write(root + "dport12/uevent", "MODALIAS=acpi:ACPI0016:PNP0A08:PNP0A03:\n");
        write(root + "decoder0.0/start", "0x490000000\n");
        write(root + "decoder0.0/size", "0x100000000\n");
        write(root + "decoder0.0/interleave_ways", "1\n");
        write(root + "decoder0.0/target_list", "12\n");
        write(root + "decoder0.0/cap_pmem", "1\n");
        write(root + "decoder0.0/cap_ram", "1\n");
        write(root + "nvdimm-bridge0/ndbus0/provider", "CXL\n");
        const std::string hb = root + "port1/";
        write(hb + "uport/uid", "12\n");
        write(hb + "dport0/uevent", "DRIVER=pcieport\nPCI_SLOT_NAME=0000:0c:00.0\n");
        write(hb + "decoder1.0/start", "0x490000000\n");
        write(hb + "decoder1.0/size", "0x10000000\n");
        write(hb + "decoder1.0/interleave_ways", "1\n");
        write(hb + "decoder1.0/target_list", "0\n");
        const std::string ep = hb + "endpoint2/";
        write(ep + "uport/uevent", "MAJOR=251\nMINOR=0\nDEVNAME=cxl/mem0\nDEVTYPE=cxl_memdev\n");
        write(ep + "decoder2.0/mode", "pmem\n");
        write(ep + "decoder2.0/dpa_size", "0x10000000\n");
        write(ep + "decoder2.0/interleave_ways", "1\n");
        memdev("mem0", "0x1", "0x40000000");
    }

    void memdev(const std::string &name, const std::string &serial, const std::string &pmem)
    {
        write(kDevices + name + "/serial", serial + "\n");
        write(kDevices + name + "/pmem/size", pmem + "\n");
        write(kDevices + name + "/ram/size", "0x0\n");
    }

    // region0 of 256 MiB on mem0's endpoint decoder, as `cxl create-region` leaves it.
    void region(bool committed = true)
    {
        const std::string r = std::string(kDevices) + "root0/decoder0.0/region0/";
        write(r + "commit", committed ? "1\n" : "0\n");
        write(r + "size", "0x10000000\n");
        write(r + "resource", "0x490000000\n");
        write(r + "interleave_ways", "1\n");
        write(r + "interleave_granularity", "256\n");
        write(r + "target0", "decoder2.0\n");
        const std::string hb = std::string(kDevices) + "root0/port1/";
        write(hb + "decoder1.0/region", "region0\n");
        write(hb + "endpoint2/decoder2.0/region", "region0\n");
    }

    // The host bridge's second root port (the 6.1 workaround).
    void secondRootPort()
    {
        write(std::string(kDevices) + "root0/port1/dport1/uevent", "PCI_SLOT_NAME=0000:0c:01.0\n");
    }
};

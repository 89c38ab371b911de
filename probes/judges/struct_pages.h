#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "probes/judges/verdict_types.h"
#include "probes/readers/topology.h"

namespace daxprobe
{

// fsdax and devdax need a struct page per 4 KiB page of the namespace (since
// Linux 4.15 for fsdax): the kernel reserves 64 B each (MAX_STRUCT_PAGE_SIZE,
// drivers/nvdimm/pfn_devs.c), in the namespace itself with map=dev (after
// the info block: the usable size shrinks by them) or in guest RAM with
// map=mem. A cost, never a fault: the exit code keeps its meaning.
constexpr std::uint64_t kStructPageBytes = 64;
constexpr std::uint64_t kBasePageBytes = 4096;

struct StructPagesCost {
    std::string ns;    // namespace0.0
    std::string map;   // dev | mem
    std::string where; // "namespace" (map=dev) | "guest_ram" (map=mem)
    // map=dev: the namespace's size minus its usable size, as the kernel
    // reports them (the info block, the struct pages and their alignment);
    // map=mem: the namespace's size x 64 / 4096, computed. nullopt when the
    // namespace's own size was not read.
    std::optional<std::uint64_t> bytes;
    std::string source; // how `bytes` was found: "kernel" | "computed"
    Verdict verdict;    // struct_pages_in_namespace | struct_pages_in_ram
};

// One per fsdax or devdax namespace with a map, in topology order.
std::vector<StructPagesCost> judgeStructPages(const Topology &topology);

} // namespace daxprobe

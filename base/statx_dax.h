#pragma once

namespace daxprobe
{

// STATX_ATTR_DAX is 0x00200000 since Linux 5.10; older uapi headers said
// 0x2000, so define it ourselves.
constexpr unsigned long long kStatxAttrDax = 0x00200000ULL;

} // namespace daxprobe

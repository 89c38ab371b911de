#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "protocol/schema.h"

namespace daxprobe::collector
{

// What the commit did with one report: the channel acks from it.
enum class Receipt : std::uint8_t {
    NotStored, // not committed (yet, or the commit failed): never acked
    Stored,    // a new row, committed
    Duplicate  // (vm, stream, seq) was already stored: acked, no second row
};

struct BatchEntry {
    protocol::ReportRecord record;
    Receipt receipt = Receipt::NotStored;
};

// One channel's reports of a wake, part of the wake's one transaction: the
// store fills each receipt, and the channel that holds them acks from them.
struct ChannelReports {
    const std::string *vm = nullptr; // the host-side channel name
    std::span<BatchEntry> reports;
};

} // namespace daxprobe::collector

#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store.h"

namespace daxprobe::collector
{

// `daxprobe-collector query`: pure renderers over what the store returned.
nlohmann::json latestJson(const std::vector<VmState> &vms);
std::string latestTable(const std::vector<VmState> &vms);
// The stored report and metrics text is spliced in as it is (the store
// wrote it with nlohmann's dump: valid UTF-8 JSON), not parsed again.
std::string historyJson(const std::string &vm, const std::vector<StoredReport> &reports);
std::string historyTable(const std::string &vm, const std::vector<StoredReport> &reports);

// For a terminal: control characters (C0, DEL, C1), bytes that are not
// UTF-8 and the backslash itself as \xNN / \\, so a VM name cannot move
// the cursor, recolour or retitle the operator's terminal.
std::string printable(std::string_view s);

} // namespace daxprobe::collector

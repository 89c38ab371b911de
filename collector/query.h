#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collector/store.h"

namespace daxprobe::collector
{

// `daxprobe-collector query`: pure renderers over what the store returned.
// JSON is written as text, keys in nlohmann's order (sorted), one VM or
// report per line; stored JSON text (reports, metrics, host facts) is
// spliced in as it is: the collector stored only text that parsed (a guest's
// report was validated with its line, host facts are the collector's own
// dump), so there is no DOM to build and dump again.
std::string latestJson(const std::vector<VmState> &vms);
std::string latestTable(const std::vector<VmState> &vms);

// The same, one VM at a time (Store::eachLatest), appended to `out`:
// `query` renders rows as the store steps through them.
class LatestRenderer
{
  public:
    LatestRenderer(bool json, std::string &out);
    void add(const VmState &v);
    void finish();

  private:
    bool json_;
    std::string &out_;
    std::size_t count_ = 0;
};
std::string historyJson(const std::string &vm, const std::vector<StoredReport> &reports);
std::string historyTable(const std::string &vm, const std::vector<StoredReport> &reports);

} // namespace daxprobe::collector

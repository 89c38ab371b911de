#include "agent/walk_options.h"

#include <cstdint>

namespace daxprobe
{

// Ranges: at least one file and one millisecond; at most a billion files
// and an hour, past which a check in the boot hook or the agent is stuck.
void addWalkOptions(CLI::App &cmd, WalkBounds &bounds)
{
    cmd.add_option_function<std::uint64_t>(
           "--walk-files", [&bounds](const std::uint64_t &n) { bounds.files = n; },
           "Examine at most N files per mount in the file walks: the DAX census samples a "
           "larger mount, the bad-block mapping stops (defaults 5000 and 100000)")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000000}));
    cmd.add_option_function<unsigned>(
           "--walk-ms",
           [&bounds](const unsigned &ms) { bounds.time = std::chrono::milliseconds(ms); },
           "Stop each file walk after T milliseconds (defaults 500 for the census, 5000 for "
           "the bad-block mapping)")
        ->type_name("T")
        ->check(CLI::Range(1u, 3600000u));
}

} // namespace daxprobe

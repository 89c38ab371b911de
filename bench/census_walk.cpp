// One DAX census (probes/readers/dax_census.h) of a directory, as a check
// takes it, timed: the census's own cost for bench/census_bench.py.
//
//   census_walk DIR
//
// Prints one JSON line: the census's counts and its wall time in µs. It also
// builds against the census before sampling (seen and sampled absent then),
// so the bench can compare both in one run.
#include <chrono>
#include <cstdio>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <nlohmann/json.hpp>

#include "probes/readers/dax_census.h"

namespace
{

// The sampling figures, where the census has them (a template: the
// requires-expression must depend on C to be false rather than an error).
template <typename C> void addSampling(nlohmann::json &j, const C &c)
{
    if constexpr (requires { c.seen + c.sampled.size(); }) {
        j["seen"] = c.seen;
        j["sampled"] = c.sampled;
    }
}

} // namespace

int main(int argc, char **argv)
{
    struct stat st {
    };
    if (argc != 2 || ::stat(argv[1], &st) != 0) {
        std::fprintf(stderr, "usage: census_walk DIR\n");
        return 2;
    }
    auto start = std::chrono::steady_clock::now();
    daxprobe::DaxCensus c =
        daxprobe::takeDaxCensus(argv[1], ::major(st.st_dev), ::minor(st.st_dev));
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    nlohmann::json j = {{"wall_us", us},
                        {"files", c.files},
                        {"not_dax", c.notDax()},
                        {"stopped_early", c.stoppedEarly}};
    addSampling(j, c);
    std::printf("%s\n", j.dump().c_str());
    return c.observed() ? 0 : 1;
}

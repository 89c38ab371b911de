// Every input kept under tests/fuzz/corpus/ for the kernel-text parsers runs
// through the fuzz target's own checks (fuzzKernelText) in the unit suite, in
// a forked child: a crash reproducer saved there by the long fuzzing job
// (tests/fuzz/long_run.sh) is a unit test from then on, built with g++ and
// without libFuzzer.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "tests/fuzz/fuzz_kernel_text.h"
#include "tests/unit/probes/isolated.h"

using daxprobe::KernelTextParser;
namespace fs = std::filesystem;

namespace
{

std::string slurp(const fs::path &p)
{
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// One child per input, so the report names the input that failed.
std::size_t replayCorpus(const std::string &dir, const std::function<void(std::string_view)> &fn)
{
    std::size_t n = 0;
    for (const auto &e : fs::directory_iterator(fs::path(FUZZ_CORPUS_DIR) / dir)) {
        if (!e.is_regular_file())
            continue;
        std::string data = slurp(e.path());
        INFO(e.path().string());
        CHECK(runIsolated([&] {
                  fn(data);
                  return std::string("ok");
              }) == "ok");
        ++n;
    }
    return n;
}

} // namespace

TEST_CASE("the kernel-text fuzz corpora replay through the parsers", "[fuzz][corpus]")
{
    const std::vector<std::pair<const char *, KernelTextParser>> single = {
        {"mountinfo", KernelTextParser::Mountinfo}, {"nfit", KernelTextParser::Nfit},
        {"kmsg", KernelTextParser::Kmsg},           {"vmstat", KernelTextParser::Vmstat},
        {"meminfo", KernelTextParser::Meminfo},     {"cedt", KernelTextParser::Cedt},
        {"uevent", KernelTextParser::Uevent}};
    for (const auto &[dir, parser] : single) {
        INFO(dir);
        // An empty corpus would make this test pass on nothing.
        CHECK(replayCorpus(
                  dir, [p = parser](std::string_view in) { daxprobe::fuzzKernelText(p, in); }) > 0);
    }
    CHECK(replayCorpus("kernel_text",
                       [](std::string_view in) { daxprobe::fuzzKernelTextSelected(in); }) > 0);
}

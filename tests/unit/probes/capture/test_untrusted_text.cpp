// Text that reaches a shell or a terminal (issue 11, item 5), live.json that
// reaches the replay (item 4), and the statx decoding (item 7's mutant).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/text_escape.h"
#include "probes/capture/live_facts.h"
#include "probes/capture/live_json.h"
#include "probes/judges/verdict.h"
#include "probes/readers/dax_evidence.h"
#include "probes/readers/facts.h"
#include "probes/readers/text_util.h"
#include "tests/unit/probes/judges/judge_mount.h"

using namespace daxprobe;
using daxprobe::test::judgeMount;
namespace fs = std::filesystem;

namespace
{

// Runs `script` with /bin/sh; returns its standard output.
std::string shell(const std::string &script)
{
    fs::path file = fs::temp_directory_path() / fmt::format("daxprobe-sh-{}.sh", ::getpid());
    std::ofstream(file) << script;
    std::string out;
    if (FILE *p = ::popen(("/bin/sh " + file.string()).c_str(), "r")) {
        char buf[4096];
        while (std::size_t n = std::fread(buf, 1, sizeof(buf), p))
            out.append(buf, n);
        ::pclose(p);
    }
    fs::remove(file);
    return out;
}

// The words a POSIX shell makes of `line`, NUL-separated.
std::vector<std::string> shellWords(const std::string &line)
{
    std::string out = shell("set -f\nprintf '%s\\0' " + line + "\n");
    std::vector<std::string> words;
    std::size_t start = 0;
    for (std::size_t i = 0; i < out.size(); ++i)
        if (out[i] == '\0') {
            words.push_back(out.substr(start, i - start));
            start = i + 1;
        }
    return words;
}

const std::vector<std::string> kHostilePaths = {"/mnt/a;reboot;$(id)",
                                                "/mnt/it's here",
                                                "/mnt/`id`",
                                                "/mnt/a b\tc\nd",
                                                "/mnt/\"q\"\\",
                                                "/mnt/*",
                                                "-rf",
                                                "/mnt/$HOME",
                                                "",
                                                "/mnt/\033[2Jx",
                                                "/mnt/ünï"};

} // namespace

TEST_CASE("shellQuote gives one word the shell reads back unchanged", "[text][shell]")
{
    CHECK(shellQuote("/mnt/pmem") == "/mnt/pmem"); // the goldens' plain paths stay as they were
    CHECK(shellQuote("/dev/pmem0") == "/dev/pmem0");
    CHECK(shellQuote("a b") == "'a b'");
    CHECK(shellQuote("it's") == "'it'\"'\"'s'");
    for (const auto &p : kHostilePaths) {
        INFO(p);
        auto words = shellWords(shellQuote(p));
        REQUIRE(words.size() == 1);
        CHECK(words[0] == p);
    }
}

TEST_CASE("a remedy run by a shell passes hostile mount points as single arguments",
          "[verdict][shell]")
{
    // Stub commands on an otherwise empty PATH log their arguments, one per line,
    // so nothing real ever runs even if the quoting breaks.
    fs::path bin = fs::temp_directory_path() / fmt::format("daxprobe-stubs-{}", ::getpid());
    fs::create_directories(bin);
    fs::path log = bin / "log";
    for (const char *name : {"umount", "mount", "ndctl", "mkfs.xfs"}) {
        std::ofstream(bin / name) << "#!/bin/sh\nprintf '%s\\0' \"${0##*/}\" \"$@\" >> '"
                                  << log.string() << "'\nprintf '\\n' >> '" << log.string()
                                  << "'\n";
        fs::permissions(bin / name, fs::perms::owner_all);
    }
    for (const auto &mp : kHostilePaths) {
        if (mp.empty())
            continue;
        INFO(mp);
        MountEntry m;
        m.major = 259;
        m.mountPoint = mp;
        m.source = "/dev/pmem0 " + mp;
        m.fstype = "xfs";
        m.superOptions = "rw";
        BlockDevFacts b{"pmem0", 259, 0, true};
        BlockDevFacts rawDev{"pmem0", 259, 0, false};
        NdNamespace fsdax;
        fsdax.dev = "namespace0.0";
        fsdax.mode = "fsdax";
        fsdax.blockdev = "pmem0";
        NdNamespace raw = fsdax;
        raw.mode = "raw";
        raw.size = 512ULL << 20; // large enough for ndctl to reconfigure
        // Mounted without dax (remount remedy), and with dax on a raw namespace (rebuild remedy).
        MountEntry withDax = m;
        withDax.superOptions = "rw,dax=always";
        for (const Verdict &v : {judgeMount(m, &b, &fsdax, nullptr, {}),
                                 judgeMount(withDax, &rawDev, &raw, nullptr, {})}) {
            REQUIRE_FALSE(v.remedy.empty());
            fs::remove(log);
            shell("PATH='" + bin.string() + "'\n" + v.remedy + "\n");
            std::ifstream in(log, std::ios::binary);
            std::stringstream ss;
            ss << in.rdbuf();
            std::vector<std::vector<std::string>> calls;
            std::vector<std::string> cur;
            std::string word;
            for (char c : ss.str()) {
                if (c == '\0') {
                    cur.push_back(word);
                    word.clear();
                } else if (c == '\n' && word.empty()) {
                    calls.push_back(cur);
                    cur.clear();
                } else {
                    word += c;
                }
            }
            INFO(v.remedy);
            REQUIRE(calls.size() >= 2);
            CHECK(calls.front() == std::vector<std::string>{"umount", mp});
            // The device is the node of the mount's number, never its source's text.
            CHECK(calls.back() ==
                  std::vector<std::string>{"mount", "-o", "dax=always", "/dev/pmem0", mp});
        }
    }
    fs::remove_all(bin);
}

TEST_CASE("printable escapes controls, bidi, invalid UTF-8 and the backslash", "[text]")
{
    CHECK(printable("/mnt/pmem") == "/mnt/pmem");
    CHECK(printable("/mnt/\033[2J") == "/mnt/\\x1b[2J");
    CHECK(printable("a\nb\rc\td\x7f") == "a\\x0ab\\x0dc\\x09d\\x7f");
    CHECK(printable("ünï €") == "ünï €");
    CHECK(printable("\xc2\x9b"
                    "31m") == "\\xc2\\x9b31m"); // C1 CSI, UTF-8 encoded
    CHECK(printable("bad\xff\xc3") == "bad\\xff\\xc3");
    CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");          // overlong '/'
    CHECK(printable("\xed\xa0\x80") == "\\xed\\xa0\\x80"); // a surrogate
    CHECK(printable("a\xe2\x80\xae"
                    "b") == "a\\xe2\\x80\\xaeb"); // U+202E reorders the line
    // A mount point named "\x1b" shows apart from one holding ESC.
    CHECK(printable("/mnt/\\x1b") == "/mnt/\\\\x1b");
    for (const auto &p : kHostilePaths)
        for (char c : printable(p))
            CHECK((static_cast<unsigned char>(c) >= 0x20 && c != 0x7f));
}

TEST_CASE("statx attributes decode with the kernel's STATX_ATTR_DAX bit", "[statx]")
{
    // Measured in the test guest: a file on a DAX mount reports 0x00200000.
    StatxEvidence ev;
    decodeStatxAttributes(ev, 0x00200000, 0x00200000 | 0x2000);
    CHECK(ev.dax);
    CHECK(ev.daxKnown);
    // The mount-root bit (0x2000, the old header's "DAX" value) is not DAX.
    decodeStatxAttributes(ev, 0x2000, 0x00200000 | 0x2000);
    CHECK_FALSE(ev.dax);
    CHECK(ev.daxKnown);
    decodeStatxAttributes(ev, 0, 0x2000);
    CHECK_FALSE(ev.daxKnown);
#ifdef STATX_ATTR_DAX
    CHECK(kStatxAttrDax == STATX_ATTR_DAX);
#endif
}

TEST_CASE("live.json of the wrong shape is an error naming the place", "[live_json]")
{
    using nlohmann::json;
    auto err = [](const char *text) {
        auto r = validateLiveJson(json::parse(text));
        return r ? std::string("valid") : r.error().describe();
    };
    CHECK(err("{}") == "valid");
    CHECK(err(R"({"topology":{"namespaces":[{"dev":"namespace0.0","size":5}]},"future":[1]})") ==
          "valid");
    CHECK_THAT(err("[]"), Catch::Contains("top level must be an object"));
    CHECK_THAT(err(R"({"topology":{"namespaces":["namespace0.0","namespace0.1"]}})"),
               Catch::Contains("topology.namespaces[0] must be an object, not string"));
    CHECK_THAT(err(R"({"topology":{"namespaces":{"dev":"x"}}})"),
               Catch::Contains("must be an array"));
    CHECK_THAT(err(R"({"topology":{"regions":[{"size":"512M"}]}})"),
               Catch::Contains("topology.regions[0].size must be a non-negative integer"));
    CHECK_THAT(err(R"({"topology":{"namespaces":[{"size":-1}]}})"), Catch::Contains("size"));
    CHECK_THAT(err(R"({"mounts":[]})"), Catch::Contains("mounts must be an object"));
    CHECK_THAT(err(R"({"mounts":{"/mnt":{"statx":{"dax":"yes"}}}})"),
               Catch::Contains(R"(mounts["/mnt"].statx.dax must be a boolean)"));
    CHECK_THAT(err(R"({"files":[{"residency":[]}]})"), Catch::Contains("files[0].residency"));
    CHECK_THAT(err(R"({"perf":"on"})"), Catch::Contains("perf must be an object"));

    // Every live.json this version (and the captured guests) wrote is valid.
    Facts facts;
    facts.topology.namespaces.push_back({});
    decodeStatxAttributes(facts.mountLive["/mnt/pmem"].statx, 0x00200000, 0x00200000);
    CHECK(validateLiveJson(liveFactsToJson(facts)));
}

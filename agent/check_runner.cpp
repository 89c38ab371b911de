#include "agent/check_runner.h"

#include <exception>
#include <optional>
#include <vector>

#include "agent/capture.h"
#include "agent/report_json.h"
#include "agent/report_text.h"
#include "probes/capture/live_facts.h"
#include "probes/capture/live_json.h"
#include "probes/judges/verdict.h"
#include "probes/readers/gather.h"
#include "probes/readers/meminfo.h"
#include "probes/readers/root_facts.h"
#include "probes/readers/vmstat.h"
#include "protocol/verdicts.h"

namespace daxprobe
{

namespace
{

CheckOutcome failed(const std::string &why)
{
    CheckOutcome out;
    out.exitCode = 2;
    out.report = protocol::failedCheckReport(why);
    out.text = "daxprobe check failed: " + why + "\n";
    return out;
}

CheckOutcome render(const Facts &facts, const CheckOptions &options)
{
    Report report = evaluate(facts);
    CheckOutcome out;
    out.exitCode = report.exitCode;
    out.report = reportToJson(facts, report);
    out.text = reportToText(facts, report, options.style);
    return out;
}

CheckOutcome replay(const CheckOptions &options)
{
    auto root = Root::open(options.replayDir);
    if (!root)
        return failed(root.error().describe());
    Facts facts;
    auto live = root->readFile("live.json", 16 << 20);
    if (!live)
        return failed("replay: " + live.error().describe());
    auto j = nlohmann::json::parse(*live, nullptr, false);
    if (j.is_discarded())
        return failed("replay: live.json is not valid JSON");
    if (auto valid = validateLiveJson(j); !valid)
        return failed("replay: " + valid.error().describe());
    liveFactsFromJson(j, facts); // topology first: readRootFacts needs its block devices
    readRootFacts(*root, facts);
    return render(facts, options);
}

CheckOutcome live(const CheckOptions &options)
{
    auto root = Root::open(options.root);
    if (!root)
        return failed(root.error().describe());
    // Made before anything is read: a DIR it will not write into is refused
    // (exit 2) before the check runs, not reported after it.
    std::optional<CaptureWriter> capture;
    if (!options.captureDir.empty()) {
        auto made = CaptureWriter::create(options.captureDir);
        if (!made)
            return failed(made.error().describe());
        capture.emplace(std::move(*made));
        root->setRecorder([&capture](const std::string &path, std::string_view content) {
            capture->addFile(path, content);
        });
    }

    GatherOptions g;
    g.live = options.root == "/";
    g.activeChecks = options.activeChecks;
    g.paths = options.paths;
    g.kmsg = options.kmsg;
    g.faultProbes = options.faultProbes;
    Facts facts = gatherFacts(*root, g);
    CheckOutcome out = render(facts, options);

    if (capture) {
        capture->writeJson("live.json", liveFactsToJson(facts));
        if (!capture->error().empty()) {
            out.report["capture_error"] = capture->error();
            out.text += capture->error() + "\n";
        }
    }
    return out;
}

} // namespace

CheckOutcome runCheck(const CheckOptions &options)
{
    // Nothing escapes: a check that throws would leave the init hook without
    // an exit code it can act on.
    try {
        return options.replayDir.empty() ? live(options) : replay(options);
    } catch (const std::exception &e) {
        return failed(std::string("internal error: ") + e.what());
    }
}

namespace
{

// Copies the named counters that exist; a kernel without THP has no thp_*.
template <typename Map, typename Names>
void pick(nlohmann::json &out, const Map &values, const Names &names)
{
    for (const auto &name : names)
        if (auto it = values.find(name); it != values.end())
            out[name] = it->second;
}

} // namespace

nlohmann::json collectMetrics(const std::string &rootDir)
{
    nlohmann::json out = {{"meminfo", nlohmann::json::object()},
                          {"vmstat", nlohmann::json::object()},
                          {"errors", nlohmann::json::array()}};
    auto root = Root::open(rootDir);
    if (!root) {
        out["errors"].push_back(root.error().describe());
        return out;
    }
    static const std::vector<std::string> meminfoNames = {"MemTotal", "MemAvailable", "Cached",
                                                          "Buffers",  "Shmem",        "Mapped",
                                                          "Dirty",    "Writeback",    "AnonPages"};
    if (auto m = root->readFile("proc/meminfo").and_then(parseMeminfo))
        pick(out["meminfo"], *m, meminfoNames);
    else
        out["errors"].push_back(m.error().describe());
    if (auto v = root->readFile("proc/vmstat").and_then(parseVmstat))
        pick(out["vmstat"], *v, vmstatFaultCounters());
    else
        out["errors"].push_back(v.error().describe());
    return out;
}

} // namespace daxprobe

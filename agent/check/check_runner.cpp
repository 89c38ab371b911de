#include "agent/check/check_runner.h"

#include <exception>
#include <optional>
#include <vector>

#include "agent/check/capture.h"
#include "agent/check/report_json.h"
#include "agent/check/report_text.h"
#include "agent/check/shutdown_memory.h"
#include "probes/capture/live_facts.h"
#include "probes/capture/live_json.h"
#include "probes/judges/verdict.h"
#include "probes/readers/gather.h"
#include "probes/readers/root_facts.h"
#include "protocol/verdicts.h"

namespace daxprobe
{

namespace
{

CheckOutcome failed(const std::string &why, const CheckOptions &options)
{
    CheckOutcome out;
    out.exitCode = 2;
    if (options.json)
        out.report = protocol::failedCheckReport(why);
    else
        out.text = "daxprobe check failed: " + why + "\n";
    return out;
}

CheckOutcome render(const Facts &facts, const CheckOptions &options)
{
    Report report = evaluate(facts);
    CheckOutcome out;
    out.exitCode = report.exitCode;
    if (options.json)
        out.report = reportToJson(report);
    else
        out.text = reportToText(report, options.style);
    return out;
}

CheckOutcome replay(const CheckOptions &options)
{
    auto root = Root::open(options.replayDir);
    if (!root)
        return failed(root.error().describe(), options);
    Facts facts;
    auto live = root->readFile("live.json", 16 << 20);
    if (!live)
        return failed("replay: " + live.error().describe(), options);
    auto j = nlohmann::json::parse(*live, nullptr, false);
    if (j.is_discarded())
        return failed("replay: live.json is not valid JSON", options);
    if (auto valid = validateLiveJson(j); !valid)
        return failed("replay: " + valid.error().describe(), options);
    liveFactsFromJson(j, facts); // topology first: readRootFacts needs its block devices
    readRootFacts(*root, facts);
    return render(facts, options);
}

CheckOutcome live(const CheckOptions &options)
{
    auto root = Root::open(options.root);
    if (!root)
        return failed(root.error().describe(), options);
    // Made before anything is read: a DIR it will not write into is refused
    // (exit 2) before the check runs, not reported after it.
    std::optional<CaptureWriter> capture;
    if (!options.captureDir.empty()) {
        auto made = CaptureWriter::create(options.captureDir);
        if (!made)
            return failed(made.error().describe(), options);
        capture.emplace(std::move(*made));
        root->setRecorder([&capture](const std::string &path, std::string_view content) {
            capture->addFile(path, content);
        });
    }

    ShutdownCounts seen;
    std::optional<StateDir> stateDir;
    if (!options.stateDir.empty()) {
        auto opened = openStateDir(options.stateDir);
        if (!opened)
            return failed(opened.error().describe(), options);
        stateDir.emplace(std::move(*opened));
        auto loaded = loadShutdownCounts(*stateDir);
        if (!loaded)
            return failed(loaded.error().describe(), options);
        seen = std::move(*loaded);
    }

    GatherOptions g;
    g.live = options.root == "/";
    g.activeChecks = options.activeChecks;
    g.walk = options.walk;
    g.paths = options.paths;
    g.kmsg = options.kmsg;
    g.faultProbes = options.faultProbes;
    Facts facts = gatherFacts(*root, g);
    facts.shutdownsSeen = seen;
    CheckOutcome out = render(facts, options);
    if (stateDir)
        if (auto saved =
                saveShutdownCounts(*stateDir, updatedShutdownCounts(seen, facts.topology.dimms));
            !saved)
            return failed(saved.error().describe(), options);

    if (capture) {
        capture->writeJson("live.json", liveFactsToJson(facts));
        if (!capture->error().empty() && options.json)
            out.report["capture_error"] = capture->error();
        else if (!capture->error().empty())
            out.text += capture->error() + "\n";
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
        return failed(std::string("internal error: ") + e.what(), options);
    }
}

} // namespace daxprobe

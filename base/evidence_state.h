#pragma once

#include <string>
#include <utility>

namespace daxprobe
{

// What became of one live check (statx, MAP_SYNC, residency, ...). One state
// that every reader asks, instead of ran/ok/error/skipped flags each reader
// combined its own way (docs/glossary.md, "evidence").
enum class EvidenceState {
    NotRun,   // nobody asked: not a candidate, or not a live run
    Skipped,  // deliberately not run; text says why
    Failed,   // tried, and the check itself could not get an answer; text is the error
    Observed, // the check answered: the payload holds the answer, text may describe it
};

// The evidence structs derive from EvidenceOutcome and add their payload (the DAX bit,
// is_pmem, byte counts). A skip or a failure always carries its text, so
// the state survives a round trip through the older ran/error fields.
struct EvidenceOutcome {
    EvidenceState state = EvidenceState::NotRun;
    std::string text;

    bool observed() const { return state == EvidenceState::Observed; }
    bool failed() const { return state == EvidenceState::Failed; }
    void skip(std::string why) { set(EvidenceState::Skipped, std::move(why)); }
    void fail(std::string error) { set(EvidenceState::Failed, std::move(error)); }
    void observe(std::string what = {}) { set(EvidenceState::Observed, std::move(what)); }

  private:
    void set(EvidenceState s, std::string t)
    {
        state = s;
        text = std::move(t);
    }
};

} // namespace daxprobe

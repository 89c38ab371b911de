// $JOURNAL_STREAM names the stream systemd connected to the journal; only a
// stderr that is that stream gets priority prefixes (test_journal.py runs the real
// program on a pipe named as its journal stream).
#include <catch2/catch.hpp>

#include "base/logging.h"

using daxprobe::isJournalStream;

TEST_CASE("JOURNAL_STREAM must name this very stream", "[logging]")
{
    CHECK(isJournalStream("8:12345", 8, 12345));
    CHECK_FALSE(isJournalStream("8:12345", 8, 12346)); // stderr redirected elsewhere
    CHECK_FALSE(isJournalStream("9:12345", 8, 12345));
    CHECK_FALSE(isJournalStream(nullptr, 8, 12345));
    for (const char *bad : {"", ":", "8:", ":12345", "8:12345x", " 8:12345", "8:-1", "8;12345",
                            "8:12345:1", "99999999999999999999999:1"})
        CHECK_FALSE(isJournalStream(bad, 8, 12345));
}

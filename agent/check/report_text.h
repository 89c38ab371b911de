#pragma once

#include <string>

#include "probes/judges/verdict.h"

namespace daxprobe
{

// How the report for people is marked up: plain, with ANSI colours (a
// terminal), or with a syslog "<N>" priority prefix on every line (stdout is
// the journal: problems and their fix at err/warning, the rest at info, so
// `journalctl -p warning` shows the finding with its remedy).
enum class TextStyle { Plain, Color, Journal };

// The report for people: what was found, the verdict, the fix.
std::string reportToText(const Report &report, TextStyle style);

} // namespace daxprobe

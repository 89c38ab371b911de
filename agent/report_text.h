#pragma once

#include <string>

#include "probes/facts.h"
#include "probes/verdict.h"

namespace daxprobe
{

// The report for people: what was found, the verdict, the fix.
std::string reportToText(const Facts &facts, const Report &report, bool color);

} // namespace daxprobe

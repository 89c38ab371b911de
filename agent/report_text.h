#pragma once

#include <string>

#include "facts.h"
#include "verdict.h"

namespace daxprobe
{

// The report for people: what was found, the verdict, the fix.
std::string reportToText(const Facts &facts, const Report &report, bool color);

} // namespace daxprobe

#pragma once

#include <deque>
#include <string>
#include <string_view>

namespace daxprobe
{

// Puts the path's non-empty components ("a//b/" -> a, b) in front of the
// ones still to walk: where a symlink's target goes in the two
// component-by-component walks (beneath.cpp, safe_path.cpp).
void pushComponentsFront(std::deque<std::string> &todo, std::string_view path);

} // namespace daxprobe

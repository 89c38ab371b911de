#pragma once

// Runs the Catch2 session (tests/unit/catch_impl.cpp, where Catch2's
// implementation is compiled once): for a test program's own main.
int runCatchSession(int argc, char **argv);

// Catch2's implementation, compiled once for every test program: the shared
// main (catch_main.cpp) and the storage-fault tests' own
// (tests/integration/faults_main.cpp) run it through runCatchSession.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "tests/unit/catch_session.h"

int runCatchSession(int argc, char **argv)
{
    return Catch::Session().run(argc, argv);
}

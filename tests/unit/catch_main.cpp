#include "tests/unit/catch_session.h"

int main(int argc, char **argv)
{
    return runCatchSession(argc, argv);
}

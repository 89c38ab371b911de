// Runs the storage-fault cases, or exits 77 (meson: SKIP) saying why when
// this machine cannot create the fault: [fs] mounts a tmpfs (needs root),
// [locked] holds the lock from the sqlite3 shell. Its own main, not the
// shared one (tests/unit/catch_main.cpp).
#include "tests/unit/catch_session.h"

#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

namespace
{

bool canMountTmpfs(std::string &why)
{
    std::string tmpl = (std::filesystem::temp_directory_path() / "daxprobe-mnt-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
        why = "cannot create a temporary directory";
        return false;
    }
    bool ok = ::mount("none", tmpl.c_str(), "tmpfs", 0, "size=64k") == 0;
    if (ok)
        ::umount2(tmpl.c_str(), MNT_DETACH);
    else
        why = std::string("cannot mount a tmpfs (needs root / CAP_SYS_ADMIN): ") +
              std::strerror(errno);
    ::rmdir(tmpl.c_str());
    return ok;
}

} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        std::string why;
        if (a == "[fs]" && !canMountTmpfs(why)) {
            std::printf("SKIP: %s\n", why.c_str());
            return 77;
        }
        if (a == "[locked]" && std::system("sqlite3 -version >/dev/null 2>&1") != 0) {
            std::printf("SKIP: the sqlite3 shell is not installed (packaging/install-deps.sh)\n");
            return 77;
        }
    }
    return runCatchSession(argc, argv);
}

// Replays a fuzz target's corpus without libFuzzer (built with g++ into the
// unit suite): every file of the directory goes through
// LLVMFuzzerTestOneInput in a forked child, so a crash reproducer saved under
// tests/fuzz/corpus/TARGET/ is a unit test that names the file from then on.
// The alarm is a hang guard (an input that loops), not a timing threshold.
// usage: fuzz-replay-TARGET CORPUS_DIR
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size);

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    std::size_t files = 0, failed = 0;
    for (const auto &e : std::filesystem::directory_iterator(argv[1])) {
        if (!e.is_regular_file())
            continue;
        ++files;
        std::ifstream in(e.path(), std::ios::binary);
        std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        pid_t pid = ::fork();
        if (pid < 0) {
            std::perror("fork");
            return 2;
        }
        if (pid == 0) {
            ::alarm(10);
            LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t *>(data.data()),
                                   data.size());
            ::_exit(0);
        }
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            ++failed;
            std::printf("FAIL %s: %s %d\n", e.path().c_str(),
                        WIFSIGNALED(status) ? "killed by signal" : "exit status",
                        WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        }
    }
    std::printf("%zu of %zu corpus files replayed cleanly\n", files - failed, files);
    // An empty corpus would pass on nothing.
    return files == 0 || failed != 0 ? 1 : 0;
}

#include "base/page_walk.h"

#include <csetjmp>
#include <csignal>

namespace daxprobe
{

namespace
{

thread_local sigjmp_buf *tJump = nullptr;
thread_local void *tFaultAddress = nullptr;

void onSigbus(int, siginfo_t *info, void *)
{
    if (tJump) {
        tFaultAddress = info->si_addr;
        siglongjmp(*tJump, 1);
    }
    // Not raised by a walk: die of it as without this handler (the access
    // that raised it runs again).
    ::signal(SIGBUS, SIG_DFL);
}

} // namespace

PageWalk touchPages(void *base, std::size_t size, std::size_t step, PageTouch how)
{
    PageWalk walk;
    struct sigaction ours {
    }, previous{};
    ours.sa_sigaction = onSigbus;
    ours.sa_flags = SA_SIGINFO;
    sigemptyset(&ours.sa_mask);
    ::sigaction(SIGBUS, &ours, &previous);

    auto *bytes = static_cast<volatile unsigned char *>(base);
    // volatile: read again after siglongjmp
    volatile std::size_t off = 0;
    volatile unsigned sink = 0;
    sigjmp_buf jump;
    tJump = &jump;
    if (sigsetjmp(jump, 1) == 0) { // 1: the handler's blocked SIGBUS is unblocked on the jump
        while (off < size) {
            if (how == PageTouch::Read)
                sink = sink + bytes[off];
            else
                bytes[off] = how == PageTouch::Fill ? kFillByte : bytes[off];
            off = off + step;
        }
    } else {
        auto at = static_cast<std::uint64_t>(static_cast<unsigned char *>(tFaultAddress) -
                                             static_cast<unsigned char *>(base));
        walk.sigbusOffset = at - at % step;
    }
    tJump = nullptr;
    ::sigaction(SIGBUS, &previous, nullptr);
    walk.pagesTouched = off / step; // off: where the walk ended, a multiple of step
    return walk;
}

} // namespace daxprobe

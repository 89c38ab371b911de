#pragma once

#include "probes/judges/verdict.h"

namespace daxprobe::test
{

// A mount judged from its parts, with what evaluate() decides about it
// (the dax option; not on virtio-pmem).
inline Verdict judgeMount(const MountEntry &m, const BlockDevFacts *blockdev, const NdNamespace *ns,
                          const MountLiveFacts *live, const std::vector<std::string> &kmsg)
{
    MountReport mr;
    mr.mount = &m;
    mr.daxOption = daxOption(m);
    mr.blockdev = blockdev;
    mr.ns = ns;
    mr.live = live;
    mr.kmsg = kmsg;
    mr.target = mountTarget(m, blockdev, "");
    return daxprobe::judgeMount(mr);
}

} // namespace daxprobe::test

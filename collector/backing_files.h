#pragma once

#include <string>

#include "collector/host_facts.h"

namespace daxprobe::collector
{

// Measures each of facts.files on this host (stat for the (dev, ino) key,
// then page-cache residency without touching the pages: cachestat, else
// mincore; never on a DAX file, where cachestat oopses some kernels and
// there is no page cache to count). A `-drive format=qcow2` image adds its
// backing chain read from the qcow2 headers (at most 8 deep); an image of
// unknown format is never probed, since a guest can write a qcow2 header
// into a raw disk and name any host file as its "backing file".
void measureBackingFiles(QemuFacts &facts);

// The backing file named in a qcow2 header, resolved against the image's
// directory; "" when there is none (or the file is not qcow2).
std::string qcow2BackingFile(const std::string &imagePath);

} // namespace daxprobe::collector

#include <catch2/catch.hpp>

#include "collector/host_facts.h"

using namespace daxprobe;
using namespace daxprobe::collector;

TEST_CASE("QEMU facts from a fixture /proc", "[collector][hostfacts]")
{
    auto root = Root::open(COLLECTOR_FIXTURES "/qemu");
    REQUIRE(root);
    QemuFacts f = readQemuFacts(*root, 4242);
    CHECK(f.errors.empty());
    CHECK(f.rssBytes == 677652ULL * 1024);
    CHECK(f.pssBytes == 676043ULL * 1024);
    REQUIRE(f.backends.size() == 3); // ram0 is not an NVDIMM backend

    const auto &b1 = f.backends[0];
    CHECK(b1.id == "mem1");
    CHECK(b1.memPath == "/srv/vm/NVDIMM.img");
    CHECK(b1.share);
    CHECK_FALSE(b1.pmem);
    CHECK(b1.mapped);
    CHECK(b1.residentBytes == 257400ULL * 1024);
    CHECK(b1.hostFsType == "xfs");
    CHECK_FALSE(b1.onHostDaxFs);
    CHECK(b1.persistence == "page_cache");

    const auto &b2 = f.backends[1]; // libvirt's JSON syntax
    CHECK(b2.id == "mem2");
    CHECK(b2.memPath == "/mnt/pmem0/vm b.img");
    CHECK(b2.pmem);
    CHECK(b2.onHostDaxFs);
    CHECK(b2.mapped);
    CHECK(b2.residentBytes == 512 * 1024);
    CHECK(b2.persistence == "pmem");

    const auto &b3 = f.backends[2];
    CHECK(b3.onDevDax);
    CHECK(b3.mapped);
    CHECK(b3.residentBytes == 0);
    CHECK(b3.persistence == "pmem");

    auto j = toJson(f);
    CHECK(j["nvdimm_backends"].size() == 3);
}

TEST_CASE("key=value backends: escapes, share default off, host DAX fs", "[collector][hostfacts]")
{
    auto b =
        parseNvdimmBackends({"qemu", "-object", "memory-backend-file,id=m,mem-path=/a,,b,size=1G",
                             "-device", "nvdimm,memdev=m"});
    REQUIRE(b.size() == 1);
    CHECK(b[0].memPath == "/a,b");
    CHECK_FALSE(b[0].share);
}

TEST_CASE("virtio-pmem backends are found beside NVDIMM ones", "[collector][hostfacts]")
{
    auto b = parseNvdimmBackends({"qemu", "-object",
                                  "memory-backend-file,id=mem1,share=on,mem-path=/n.img,size=512M",
                                  "-device", "nvdimm,id=nvdimm1,memdev=mem1", "-object",
                                  "memory-backend-file,id=vpm0,share=on,mem-path=/v.img,size=512M",
                                  "-device", "virtio-pmem-pci,memdev=vpm0,id=vpmem0", "-object",
                                  "memory-backend-file,id=ram,mem-path=/ram.img,size=1G"});
    REQUIRE(b.size() == 2);
    CHECK(b[0].device == "nvdimm");
    CHECK(b[1].device == "virtio-pmem-pci");
    CHECK(b[1].memPath == "/v.img");
    CHECK(b[1].share);
    QemuFacts q;
    q.pid = 1;
    q.backends = b;
    CHECK(toJson(q)["nvdimm_backends"][1]["device"] == "virtio-pmem-pci");
}

TEST_CASE("CXL type-3 pmem backends, in QEMU 7.2 and 8.0 syntax", "[collector][hostfacts]")
{
    // 7.2: memdev= is the persistent memory; 8.0 on: persistent-memdev=, and
    // volatile-memdev= (RAM) and lsa= (labels) are no pmem backends.
    auto b = parseNvdimmBackends(
        {"qemu", "-object", "memory-backend-file,id=cxl-mem0,share=on,mem-path=/c0.raw,size=256M",
         "-object", "memory-backend-file,id=cxl-lsa0,share=on,mem-path=/l0.raw,size=256M",
         "-device", "cxl-type3,bus=rp0,memdev=cxl-mem0,lsa=cxl-lsa0,id=cxl-pmem0,sn=0x1", "-object",
         R"({"qom-type":"memory-backend-file","id":"p1","mem-path":"/c1.raw"})", "-object",
         "memory-backend-file,id=v1,mem-path=/v1.raw,size=256M", "-device",
         R"({"driver":"cxl-type3","persistent-memdev":"p1","volatile-memdev":"v1","lsa":"l1"})"});
    REQUIRE(b.size() == 2);
    CHECK(b[0].device == "cxl-type3");
    CHECK(b[0].memPath == "/c0.raw");
    CHECK(b[0].share);
    CHECK(b[1].device == "cxl-type3");
    CHECK(b[1].memPath == "/c1.raw");

    auto f = parseBackingFiles(
        {"qemu", "-object", "memory-backend-file,id=cxl-mem0,share=on,mem-path=/c0.raw,size=256M",
         "-object", "memory-backend-file,id=cxl-lsa0,share=on,mem-path=/l0.raw,size=256M",
         "-object", "memory-backend-file,id=v1,mem-path=/v1.raw,size=256M", "-device",
         "cxl-type3,memdev=cxl-mem0,lsa=cxl-lsa0", "-device", "cxl-type3,volatile-memdev=v1"});
    REQUIRE(f.size() == 3);
    CHECK(f[0].role == "cxl-type3");
    CHECK(f[1].role == "cxl-lsa");
    CHECK(f[2].role == "cxl-type3-volatile");
}

TEST_CASE("missing process is reported, not fatal", "[collector][hostfacts]")
{
    auto root = Root::open(COLLECTOR_FIXTURES "/qemu");
    REQUIRE(root);
    QemuFacts f = readQemuFacts(*root, 1);
    CHECK_FALSE(f.errors.empty());
    CHECK(f.backends.empty());
}

TEST_CASE("smapsField reads kB as bytes", "[collector][hostfacts]")
{
    CHECK(smapsField("Rss:  12 kB\nPss:   3 kB\n", "Pss") == 3072);
    CHECK(smapsField("Rss:  12 kB\n", "Pss") == 0);
}

TEST_CASE("a share=off backend is never persistent, even on host DAX with pmem=on",
          "[collector][hostfacts]")
{
    // share=off: QEMU maps the file private, guest writes stay in anonymous
    // copies and never reach it, whatever the file sits on.
    auto root = Root::open(COLLECTOR_FIXTURES "/qemu");
    REQUIRE(root);
    QemuFacts f = readQemuFacts(*root, 4343);
    REQUIRE(f.backends.size() == 1);
    const auto &b = f.backends[0];
    CHECK_FALSE(b.share);
    CHECK(b.pmem);
    CHECK(b.onHostDaxFs);
    CHECK(b.mapped);
    CHECK(b.residentBytes == 256 * 1024);
    CHECK(b.persistence == "none");
    CHECK(toJson(f)["nvdimm_backends"][0]["persistence"] == "none");
}

TEST_CASE("without an NVDIMM backend the full smaps is not read", "[collector][hostfacts]")
{
    // Fixture 4444 has a memory-backend-file (RAM, no nvdimm device) and no
    // smaps at all: reading it would be an error in f.errors.
    auto root = Root::open(COLLECTOR_FIXTURES "/qemu");
    REQUIRE(root);
    QemuFacts f = readQemuFacts(*root, 4444);
    CHECK(f.backends.empty());
    CHECK(f.rssBytes == 677652ull * 1024);
    CHECK(f.errors.empty());
}

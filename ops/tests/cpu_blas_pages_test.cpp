// Note [OpenBLAS's packing buffers on huge pages]: the buffers a product
// draws are advised, as /proc/self/smaps shows, and products stay right.
#include "ops/cpu/cpu_blas_pages.h"

#include <cblas.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ops/cpu/cpu_backend.h"

namespace {

/// The VmFlags of the mapping of /proc/self/smaps that holds [p] ("" when
/// none does).
std::string vm_flags_of(const void* p) {
  auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0, end = 0;
    char dash = 0;
    std::istringstream in(line);
    if (in >> std::hex >> start >> dash >> end && dash == '-')
      inside = start <= at && at < end;
    else if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

bool huge_pages_available() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return !s.empty() && s.find("[never]") == std::string::npos;
}

}  // namespace

TEST_CASE("OpenBLAS: the packing buffers a product draws are on huge pages",
          "[cpu]") {
  auto [alloc, release] = ss::ops::cpu::blas_buffers();
  REQUIRE(alloc);  // the BLAS ss links (deps.md §4) is OpenBLAS
  if (!huge_pages_available()) {
    WARN("transparent huge pages are off here: nothing to advise");
    return;
  }
  ss::ops::set_cpu_threads(1);  // advises, as `ss run --threads 1` does
  CHECK(ss::ops::cpu::advise_blas_huge_pages(1) == 4);
  // The slots a product on one thread can draw, in the order it draws
  // them: each lies in a mapping advised MADV_HUGEPAGE ("hg").
  std::vector<void*> slots;
  for (int i = 0; i < 4; ++i) slots.push_back(alloc(0));
  for (void* p : slots) {
    REQUIRE(p);
    std::string flags = vm_flags_of(p);
    INFO(flags);
    CHECK(flags.find(" hg") != std::string::npos);
  }
  for (auto it = slots.rbegin(); it != slots.rend(); ++it) release(*it);

  // A product after the advice, against a hand count: C = A B with A
  // [2 3] = 1..6 and B [3 2] = 1..6 gives [[22 28] [49 64]].
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 2, 3, 4, 5, 6}, c[4] = {};
  cblas_sgemm(CblasRowMajor,
              CblasNoTrans,
              CblasNoTrans,
              2,
              2,
              3,
              1.f,
              a,
              3,
              b,
              2,
              0.f,
              c,
              2);
  CHECK(c[0] == 22);
  CHECK(c[1] == 28);
  CHECK(c[2] == 49);
  CHECK(c[3] == 64);
}

// ss_fuzz_replay TARGET PATH...: feeds each file (a PATH that is a folder:
// each file under it, in path order) to a fuzz target's
// LLVMFuzzerTestOneInput, as libFuzzer would, without libFuzzer: the
// corpus replay that ctest and scripts/test.sh (under ASan + UBSan) run in
// every build, gcc's included. Each target's source is compiled here with
// LLVMFuzzerTestOneInput renamed ss_fuzz_<name> (CMakeLists.txt), so one
// binary holds them all. A finding aborts (Note [What a fuzz target calls
// a finding]); the line before names the input.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#define SS_FUZZ_TARGET(name, seeds) \
  extern "C" int ss_fuzz_##name(const uint8_t* data, size_t size);
#include "tests/fuzz/targets.def"
#undef SS_FUZZ_TARGET

namespace {

namespace fs = std::filesystem;

struct Target {
  const char* name;
  int (*run)(const uint8_t*, size_t);
};

const Target kTargets[] = {
#define SS_FUZZ_TARGET(name, seeds) {#name, ss_fuzz_##name},
#include "tests/fuzz/targets.def"
#undef SS_FUZZ_TARGET
};

int usage() {
  std::fprintf(stderr, "usage: ss_fuzz_replay TARGET PATH...\ntargets:");
  for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
  std::fprintf(stderr, "\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return usage();
  const Target* target = nullptr;
  for (const Target& t : kTargets)
    if (std::strcmp(t.name, argv[1]) == 0) target = &t;
  if (!target) return usage();
  std::vector<fs::path> files;
  for (int i = 2; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::recursive_directory_iterator(argv[i]))
        if (e.is_regular_file()) files.push_back(e.path());
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.push_back(argv[i]);
    } else {
      std::fprintf(stderr, "ss_fuzz_replay: no such file: %s\n", argv[i]);
      return 1;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "ss_fuzz_replay: no inputs: an empty corpus\n");
    return 1;
  }
  std::sort(files.begin(), files.end());
  double slowest = 0;
  std::string slowest_name;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    std::fprintf(stderr, "%s\n", f.c_str());
    auto t0 = std::chrono::steady_clock::now();
    target->run(bytes.data(), bytes.size());
    double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count();
    if (s > slowest) slowest = s, slowest_name = f.filename().string();
  }
  std::printf(
      "ss_fuzz_replay %s: %zu inputs, no finding (slowest: %s, %.3f s)\n",
      target->name,
      files.size(),
      slowest_name.c_str(),
      slowest);
  return 0;
}

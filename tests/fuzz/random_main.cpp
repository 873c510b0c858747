// ss_fuzz_random N [--seed S] [--from I] [--save DIR] [--seeds DIR]
// [--inputs DIR] [--show], or ss_fuzz_random --print FILE...: the `run` target
// (run_target.cpp) on N pseudo-random inputs, numbered I, I+1, ... and
// each made from (S, its number) alone, without libFuzzer: issue 32's
// million executions in the Release build, where a clang build for
// libFuzzer takes too long. Unlike the target it goes on past a finding
// that is an exception (it saves the input to DIR, default the temp
// folder's ss_fuzz_runs/run/) and counts the outcomes: static errors,
// runtime errors by kind, values, and which builtins reached evaluation,
// and the oracle's counts: values compared with ref/, and the builtins run
// without an adapter (Note [A runtime fuzzer's oracle] in run_ref.cpp); a
// value that differs from ref's is a finding.
// A crash or a hang ends it; the line before names the input's number,
// which `--from I 1` runs again. --seeds writes, for each builtin, the
// first input that reached evaluation, spelled `name;...` (the corpus's
// form: Note [A runtime fuzzer's programs]). --inputs writes every input
// as a file of DIR, for `ss_fuzz_replay run DIR` on several devices
// (Note [A runtime fuzzer on several devices]: that run costs worker
// processes per input, so this driver leaves it to the replay). README.md
// says how it is used.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "tests/fuzz/run_outcome.h"
#include "tests/fuzz/run_program.h"

namespace {

namespace fs = std::filesystem;
using ss::fuzz::RunOutcome;

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  return z ^ (z >> 31);
}

// Input [i] of seed [seed]: 4 to 40 bytes, enough for the widest entry's
// choices (Note [A runtime fuzzer's programs]).
std::vector<uint8_t> input(uint64_t seed, uint64_t i) {
  uint64_t s = seed * 0x100000001b3 ^ i;
  std::vector<uint8_t> bytes(4 + splitmix(s) % 37);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(splitmix(s));
  return bytes;
}

// The input running now, for the crash handler's line.
volatile uint64_t g_current = 0;

void on_crash(int sig) {
  char line[64];
  int n = std::snprintf(line,
                        sizeof line,
                        "ss_fuzz_random: crashed at input %llu\n",
                        static_cast<unsigned long long>(g_current));
  (void)!::write(2, line, n);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// [in] as the corpus spells it: the builtin's name for its two index
// bytes, so that the file keeps its builtin when the table grows.
void write_seed(const fs::path& dir,
                const std::string& op,
                const std::vector<uint8_t>& in) {
  fs::create_directories(dir);
  std::ofstream f(dir / op, std::ios::binary);
  f << op << ';';
  f.write(reinterpret_cast<const char*>(in.data()) + 2, in.size() - 2);
}

int usage() {
  std::fprintf(stderr,
               "usage: ss_fuzz_random N [--seed S] [--from I] [--save DIR] "
               "[--seeds DIR] [--inputs DIR] [--show]\n");
  return 64;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  // --print FILE...: the program each input file writes (a corpus file's,
  // a finding's), not run.
  if (!std::strcmp(argv[1], "--print")) {
    for (int i = 2; i < argc; ++i) {
      std::ifstream f(argv[i], std::ios::binary);
      if (!f) {
        std::fprintf(stderr, "ss_fuzz_random: no such file: %s\n", argv[i]);
        return 1;
      }
      std::vector<uint8_t> in((std::istreambuf_iterator<char>(f)), {});
      std::printf("%s:\n%s",
                  argv[i],
                  ss::fuzz::run_program_text(in.data(), in.size()).c_str());
    }
    return 0;
  }
  uint64_t n = std::strtoull(argv[1], nullptr, 10), seed = 1, from = 0;
  fs::path save = fs::temp_directory_path() / "ss_fuzz_runs" / "run", seeds,
           inputs;
  bool show = false;
  for (int i = 2; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--show")) {
      show = true;  // each program on stderr before it runs
      --i;
    } else if (i + 1 >= argc) {
      return usage();
    } else if (!std::strcmp(argv[i], "--seed"))
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--from"))
      from = std::strtoull(argv[i + 1], nullptr, 10);
    else if (!std::strcmp(argv[i], "--save"))
      save = argv[i + 1];
    else if (!std::strcmp(argv[i], "--seeds"))
      seeds = argv[i + 1];
    else if (!std::strcmp(argv[i], "--inputs"))
      inputs = argv[i + 1];
    else
      return usage();
  }
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE}) ::signal(sig, on_crash);

  std::map<std::string, uint64_t> outcomes, reached, unadapted;
  uint64_t findings = 0, compared = 0, declined = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = from; i < from + n; ++i) {
    g_current = i;
    std::vector<uint8_t> in = input(seed, i);
    if (!inputs.empty()) {
      fs::create_directories(inputs);
      std::ofstream(
          inputs / ("input-" + std::to_string(seed) + "-" + std::to_string(i)),
          std::ios::binary)
          .write(reinterpret_cast<const char*>(in.data()), in.size());
    }
    std::string text = ss::fuzz::run_program_text(in.data(), in.size());
    if (show)
      std::fprintf(stderr,
                   "input %llu:\n%s",
                   static_cast<unsigned long long>(i),
                   text.c_str());
    RunOutcome r = ss::fuzz::run_program(text);
    compared += r.ref_compared;
    declined += r.ref_declined;
    for (const std::string& op : r.ref_unadapted) ++unadapted[op];
    switch (r.kind) {
      case RunOutcome::Kind::Static:
        ++outcomes["static error"];
        break;
      case RunOutcome::Kind::Runtime:
        ++outcomes["runtime " + r.detail];
        break;
      case RunOutcome::Kind::Value:
        ++outcomes["value"];
        break;
      case RunOutcome::Kind::Differs:
      case RunOutcome::Kind::Finding: {
        ++findings;
        fs::create_directories(save);
        fs::path f = save / ("finding-" + std::to_string(seed) + "-" +
                             std::to_string(i));
        std::ofstream(f, std::ios::binary)
            .write(reinterpret_cast<const char*>(in.data()), in.size());
        std::printf("finding at input %llu (%s): %s\n",
                    static_cast<unsigned long long>(i),
                    f.c_str(),
                    r.detail.c_str());
        break;
      }
    }
    if (r.kind == RunOutcome::Kind::Runtime ||
        r.kind == RunOutcome::Kind::Value) {
      std::string op = ss::fuzz::run_program_builtin(in.data(), in.size());
      if (reached[op]++ == 0 && !seeds.empty() && !op.empty())
        write_seed(seeds, op, in);
    }
    if ((i - from + 1) % 100000 == 0)
      std::printf("%llu inputs\n",
                  static_cast<unsigned long long>(i - from + 1)),
          std::fflush(stdout);
  }
  double s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf(
      "ss_fuzz_random: %llu inputs (seed %llu, from %llu) in %.1f s, "
      "%llu findings\n",
      static_cast<unsigned long long>(n),
      static_cast<unsigned long long>(seed),
      static_cast<unsigned long long>(from),
      s,
      static_cast<unsigned long long>(findings));
  for (const auto& [what, count] : outcomes)
    std::printf(
        "  %-28s %llu\n", what.c_str(), static_cast<unsigned long long>(count));
  // Note [A runtime fuzzer's oracle] (run_ref.cpp).
  std::printf(
      "values compared with ref: %llu (calls declined by their adapter: "
      "%llu)\nbuiltins run without a ref adapter: %zu\n",
      static_cast<unsigned long long>(compared),
      static_cast<unsigned long long>(declined),
      unadapted.size());
  for (const auto& [op, count] : unadapted)
    std::printf(
        "  %-28s %llu\n", op.c_str(), static_cast<unsigned long long>(count));
  std::printf("builtins that reached evaluation: %zu (\"\" formats a value)\n",
              reached.size());
  for (const auto& [op, count] : reached)
    std::printf(
        "  %-28s %llu\n", op.c_str(), static_cast<unsigned long long>(count));
  return findings ? 1 : 0;
}

#pragma once
// Helpers for tests that run the `ss` binary as a process (SS_BINARY) and
// compare what it prints.

#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace ss::testing {

struct ProcessRun {
  int rc = -1;
  std::string out, err;
};

/// Runs `ss ARGS` in [dir] (the current one when empty) with [env]
/// ("NAME=value ..."); stderr goes through [dir]/stderr.txt or
/// [err_file]. [binary]: SS_HOOKS_BINARY for the failure hooks (Note [Test
/// hooks] in interp/devices/worker/test_hooks.h).
inline ProcessRun run_ss_process(const std::string& args,
                                 const std::string& dir = "",
                                 const std::string& env = "",
                                 const std::string& err_file = "",
                                 const std::string& binary = SS_BINARY) {
  std::string err =
      !err_file.empty() ? err_file
      : dir.empty() ? "/tmp/ss_test_stderr_" + std::to_string(getpid()) + ".txt"
                    : dir + "/stderr.txt";
  std::string cmd = (dir.empty() ? "" : "cd '" + dir + "' && ") + env + " " +
                    binary + " " + args + " 2>'" + err + "'";
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p);
  ProcessRun r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  r.rc = WEXITSTATUS(pclose(p));
  std::ifstream f(err);
  r.err.assign(std::istreambuf_iterator<char>(f), {});
  return r;
}

/// The numbers in [s] with a decimal point (logged floats), in order.
inline std::vector<double> decimals(const std::string& s) {
  std::vector<double> v;
  std::regex num(R"(-?\d+\.\d+(e-?\d+)?)");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), num);
       it != std::sregex_iterator();
       ++it)
    v.push_back(std::stod(it->str()));
  return v;
}

}  // namespace ss::testing

// `ss COMMAND --help` (issue 25, defect 6: it printed the usage line only):
// every option cli.md names for a command, and every one the command
// takes, is listed with a line on what it does.
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "interp/tests/process_util.h"

namespace {

using ss::testing::run_ss_process;

// Each command's options: cli.md's synopsis, then those the command takes
// beyond it (its parser in interp/cli/cmd_*.cpp, repl.cpp).
const std::map<std::string, std::vector<std::string>> kOptions = {
    {"run",
     {"--devices SPEC",
      "-D NAME=SIZE",
      "--entry NAME",
      "-- ARGS",
      "--threads N"}},
    {"check", {"--devices SPEC", "--json", "--types", "-D NAME=SIZE"}},
    {"explain", {"--devices SPEC", "--json", "-D NAME=SIZE"}},
    {"repl", {"--devices SPEC"}},
    {"conformance",
     {"--devices SPEC",
      "--filter GLOB",
      "--engine processes|threads",
      "--missing-expect-ok"}},
    {"lsp", {"--devices SPEC", "-D NAME=SIZE"}},
};

// The description under option [flag] in [help]: the indented lines that
// follow its own line ("  --json" then "        the diagnostics ...").
std::string described(const std::string& help, const std::string& flag) {
  std::istringstream in(help);
  std::string line, out;
  bool in_it = false;
  while (std::getline(in, line)) {
    if (line == "  " + flag) {
      in_it = true;
    } else if (in_it && line.rfind("        ", 0) == 0) {
      out += line.substr(8) + " ";
    } else if (in_it) {
      break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("ss COMMAND --help lists every option with what it does",
          "[cli][process]") {
  for (const auto& [cmd, options] : kOptions) {
    INFO("ss " << cmd << " --help");
    ss::testing::ProcessRun r = run_ss_process(cmd + " --help");
    CHECK(r.rc == 0);
    CHECK(r.out.rfind("usage: ss " + cmd + " ", 0) == 0);
    for (const std::string& flag : options) {
      INFO(flag);
      // A sentence, not a repeat of the flag.
      CHECK(described(r.out, flag).size() > 20);
    }
    CHECK(described(r.out, "-h, --help").size() > 10);
    // Every option the usage line shows is described too.
    const std::string usage = r.out.substr(0, r.out.find('\n'));
    std::regex opt(R"(\[(--?[A-Za-z][A-Za-z-]*))");
    for (auto it = std::sregex_iterator(usage.begin(), usage.end(), opt);
         it != std::sregex_iterator();
         ++it) {
      const std::string name = (*it)[1];
      INFO(name);
      CHECK(r.out.find("\n  " + name) != std::string::npos);
    }
    CHECK(r.out.find("Exit codes: 0 ok, 1 static error") != std::string::npos);
  }
  // run reads two environment variables; both are said.
  ss::testing::ProcessRun run = run_ss_process("run --help");
  CHECK(described(run.out, "SHAPESCRIPT_THREADS=N").size() > 10);
  CHECK(described(run.out, "SHAPESCRIPT_COLLECTIVE_TIMEOUT=SECONDS").size() >
        10);
  // `-h` is `--help`.
  CHECK(run_ss_process("check -h").out == run_ss_process("check --help").out);
}

TEST_CASE("ss --help lists each command with its usage", "[cli][process]") {
  ss::testing::ProcessRun r = run_ss_process("--help");
  CHECK(r.rc == 0);
  for (const auto& [cmd, options] : kOptions) {
    ss::testing::ProcessRun own = run_ss_process(cmd + " --help");
    // The overview's line for the command is its usage line's arguments.
    std::string usage = own.out.substr(0, own.out.find('\n'));
    std::string args = usage.substr(std::string("usage: ss ").size());
    INFO(args);
    CHECK(r.out.find(args.substr(0, 20)) != std::string::npos);
  }
}

TEST_CASE("ss repl refuses an unknown option, ss conformance runs one case",
          "[cli][process]") {
  ss::testing::ProcessRun bad = run_ss_process("repl --bogus");
  CHECK(bad.rc == 64);
  CHECK(bad.err.find("ss repl: unknown option '--bogus'") != std::string::npos);
  // One case file, not only a folder of them.
  const std::string one = std::string(SS_SOURCE_DIR) +
                          "/conformance/spec/stacked_model_with_dims.ss";
  ss::testing::ProcessRun r =
      run_ss_process("conformance --devices cpu " + one);
  CHECK(r.rc == 0);
  CHECK(r.out.find("PASS stacked_model_with_dims.ss [cpu]") !=
        std::string::npos);
  CHECK(r.out.find("1 passed, 0 failed") != std::string::npos);
}

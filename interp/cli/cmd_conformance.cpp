// `ss conformance [DIR] [--devices SPEC]... [--filter GLOB]`: runs every
// `.ss` case under DIR and compares what happens with its `# expect:`
// header. This build checks programs (static expectations); cases that
// need evaluation are reported as skipped, never as passed.
#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/cli/conformance_compare.h"
#include "interp/cli/expectations.h"
#include "interp/eval/data_parallel.h"
#include "interp/eval/interpreter.h"

namespace ss::cli {

namespace fs = std::filesystem;

namespace {

struct Outcome {
  bool pass = false;
  bool skipped = false;
  std::string detail;
  std::string out;  // what main printed (compared across device sets)
  eval::Interpreter::FinalParams params;  // main's models at its end
};

std::string describe(const diag::Diagnostic& d, const diag::SourceMap& sm) {
  diag::LineCol lc = sm.line_col(d.span.file, d.span.begin);
  return std::string(diag::code_name(d.code)) + " at " +
         std::to_string(lc.line) + ":" + std::to_string(lc.column) + " (" +
         d.message + ")";
}

// Runs main() when the program has one taking no arguments. Returns the
// runtime error's kind ("" when it ran clean) and its rendering.
struct RunResult {
  bool ran = false;
  std::string kind;
  std::string detail;
  std::string out;
  eval::Interpreter::FinalParams params;  // rank 0's
  std::string ranks_differ;  // "" when every rank's params are rank 0's
};

// On several devices the suite runs the ranks as threads of this process
// over real Gloo collectives (interp/eval/data_parallel.h), so it can read
// rank 0's output; `ss run` runs the same engine in worker processes.
RunResult run_main(const check::Program& prog, const diag::SourceMap& sm) {
  RunResult r;
  const check::FnInfo* main = prog.fn("main");
  if (!main || !main->params.empty()) return r;
  r.ran = true;
  std::ostringstream out;
  int world = static_cast<int>(prog.devices().count());
  if (world > 1) {
    std::vector<eval::Interpreter::FinalParams> ranks;
    eval::ParallelOptions po;
    po.world = world;
    po.final_params = &ranks;
    auto e = eval::run_data_parallel(prog, sm, out, po);
    if (e) {
      r.kind = e->kind();
      r.detail = eval::render_runtime_error(*e, sm);
    } else {
      r.params = ranks.at(0);
      r.ranks_differ = compare_ranks(ranks);
    }
    r.out = out.str();
    return r;
  }
  try {
    eval::Interpreter in(prog, sm, out);
    in.keep_final_params();
    in.run_main({});
    r.params = in.final_params();
  } catch (const eval::RuntimeError& e) {
    r.kind = e.kind();
    r.detail = eval::render_runtime_error(e, sm);
  }
  r.out = out.str();
  return r;
}

Outcome run_case(const fs::path& file,
                 const std::string& text,
                 const Expectation& ex,
                 const std::string& devices,
                 const Outcome* one_device) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  check::Options opts;
  opts.devices_override = devices;
  auto prog = check::check_source(file.string(), text, sm, diags, opts);
  Outcome o;
  if (ex.kind != Expectation::Kind::Error && !diags.empty()) {
    o.detail = "expected the program to check, got:";
    for (const auto& d : diags.list()) o.detail += "\n    " + describe(d, sm);
    return o;
  }
  if (ex.kind != Expectation::Kind::Error && prog && !prog->mesh().empty())
    return {false,
            true,
            "checked clean; running spmd programs arrives with the spmd work"};
  if (ex.kind == Expectation::Kind::Ok) {
    RunResult r = run_main(*prog, sm);
    o.out = r.out;
    o.params = r.params;
    o.pass = r.kind.empty();
    if (!o.pass) {
      o.detail = "expected ok, main raised:\n" + r.detail;
    } else if (!r.ranks_differ.empty()) {
      o.pass = false;
      o.detail = " the workers' copies differ: " + r.ranks_differ;
    } else if (one_device && prog->devices().count() > 1) {
      double tol = ex.tolerance.value_or(1e-5);
      std::string diff = compare_outputs(one_device->out, r.out, tol);
      if (diff.empty())
        diff = compare_params(one_device->params, r.params, tol);
      o.pass = diff.empty();
      if (!o.pass) o.detail = " not the result of one device: " + diff;
    }
    return o;
  }
  if (ex.kind == Expectation::Kind::Runtime) {
    RunResult r = run_main(*prog, sm);
    o.pass = r.kind == ex.runtime_kind;
    if (!o.pass)
      o.detail = "expected runtime " + ex.runtime_kind + ", got " +
                 (r.ran ? (r.kind.empty() ? "a clean run" : r.detail)
                        : "no fn main() to run");
    return o;
  }
  // Errors: the same set of (code, line[, column]) in the case's own file.
  std::vector<bool> matched(diags.size(), false);
  std::vector<std::string> missing;
  for (const ExpectedError& e : ex.errors) {
    bool found = false;
    for (size_t i = 0; i < diags.size() && !found; ++i) {
      const diag::Diagnostic& d = diags.list()[i];
      if (matched[i] || d.code != *diag::code_from_name(e.code)) continue;
      if (d.span.file >= sm.size() ||
          sm.file(d.span.file).path != file.string())
        continue;
      diag::LineCol lc = sm.line_col(d.span.file, d.span.begin);
      if (lc.line == e.line && (e.column == 0 || lc.column == e.column)) {
        matched[i] = true;
        found = true;
      }
    }
    if (!found)
      missing.push_back(e.code + " at " + std::to_string(e.line) +
                        (e.column ? ":" + std::to_string(e.column) : ""));
  }
  std::vector<std::string> extra;
  for (size_t i = 0; i < diags.size(); ++i)
    if (!matched[i]) extra.push_back(describe(diags.list()[i], sm));
  o.pass = missing.empty() && extra.empty();
  for (const auto& m : missing) o.detail += "\n    missing: error " + m;
  for (const auto& x : extra) o.detail += "\n    unexpected: " + x;
  return o;
}

}  // namespace

int cmd_conformance(const std::vector<std::string>& args) {
  std::string dir = "conformance";
  std::vector<std::string> device_sets;
  std::string filter;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--devices" && i + 1 < args.size()) {
      device_sets.push_back(args[++i]);
      if (!valid_device_spec(device_sets.back())) {
        std::cerr << "ss conformance: bad --devices '" << device_sets.back()
                  << "'\n";
        return kExitUsage;
      }
    } else if (a == "--filter" && i + 1 < args.size()) {
      filter = args[++i];
    } else if (a == "--help" || a == "-h") {
      std::cout << "usage: ss conformance [DIR] [--devices SPEC]... "
                   "[--filter GLOB]\n";
      return kExitOk;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "ss conformance: unknown option '" << a << "'\n";
      return kExitUsage;
    } else {
      dir = a;
    }
  }
  // cli.md: by default every case on one, two and three CPU devices.
  if (device_sets.empty()) device_sets = {"cpu", "cpu[0 1]", "cpu[0 1 2]"};
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::cerr << "ss conformance: '" << dir << "' is not a directory\n";
    return kExitUsage;
  }
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file() && it->path().extension() == ".ss")
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  int passed = 0, failed = 0, skipped = 0;
  for (const fs::path& f : files) {
    std::string rel = fs::relative(f, dir, ec).string();
    if (!filter.empty() && fnmatch(filter.c_str(), rel.c_str(), 0) != 0)
      continue;
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string why;
    auto ex = parse_expectations(ss.str(), why);
    if (!ex) {
      std::cout << "FAIL " << rel << ": bad header: " << why << "\n";
      ++failed;
      continue;
    }
    std::vector<std::string> sets =
        ex->devices.empty() ? device_sets : ex->devices;
    std::optional<Outcome> one_device;  // the reference run
    for (const std::string& devs : sets) {
      Outcome o =
          run_case(f, ss.str(), *ex, devs, one_device ? &*one_device : nullptr);
      if (devs == "cpu" && o.pass) one_device = o;
      const char* tag = o.skipped ? "SKIP" : o.pass ? "PASS" : "FAIL";
      std::cout << tag << " " << rel << " [" << devs << "]";
      if (o.skipped)
        std::cout << ": " << o.detail;
      else if (!o.pass)
        std::cout << ":" << o.detail;
      std::cout << "\n";
      (o.skipped ? skipped : o.pass ? passed : failed)++;
    }
  }
  std::cout << passed << " passed, " << failed << " failed";
  if (skipped) std::cout << ", " << skipped << " skipped";
  std::cout << "\n";
  return failed ? kExitStatic : kExitOk;
}

}  // namespace ss::cli

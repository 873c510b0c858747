// `ss conformance [DIR | CASE.ss] [--devices SPEC]... [--filter GLOB] [--engine
// processes|threads] [--missing-expect-ok]`: runs every `.ss` case under
// DIR and compares what happens with its `# expect:` header, and on
// several devices with the one-device run (conformance/README.md).
#include <fnmatch.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "dist/comm/communicator.h"
#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/cli/conformance_compare.h"
#include "interp/cli/expectations.h"
#include "interp/cli/help.h"
#include "interp/cli/host_options.h"
#include "interp/devices/devices.h"
#include "interp/eval/interpreter.h"
#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

namespace ss::cli {

namespace fs = std::filesystem;

namespace {

// f32's relative error of a sum in another order, per step (devices.md
// item 1), unless the case says `# tolerance:`.
constexpr double kDefaultTolerance = 1e-5;

struct Outcome {
  bool pass = false;
  std::string detail;
  std::string out;           // what main printed (compared across device sets)
  eval::FinalParams params;  // main's models at its end
  CaseFiles files;           // what main wrote
  std::string error_head;    // a runtime error's first line (where, what)
};

std::string describe(const diag::Diagnostic& d, const diag::SourceMap& sm) {
  return std::string(diag::code_name(d.code)) + " at " + sm.position(d.span) +
         " (" + d.message + ")";
}

// A program with a mesh runs on `cpu` (every instance simulated in one
// process) and on `cpu[<mesh size>]`, one device an instance (cli.md), not
// on the suite's default lists, where its mesh would be E2005. The mesh is
// read from the syntax alone, so error cases get the same lists. Empty
// when [text] declares no mesh.
std::vector<std::string> mesh_device_sets(const fs::path& file,
                                          const std::string& text) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  uint32_t id = sm.add(file.string(), text);
  ast::Module m = parse::parse(lex::lex(sm, id, diags), id, diags);
  if (m.meshes.empty()) return {};
  int64_t n = 1;
  for (const ast::MeshAxisDecl& a : m.meshes.front().axes)
    n = std::min<int64_t>(n * std::clamp<int64_t>(a.size, 1, 64), 64);
  check::DeviceList one_each;
  for (int64_t i = 0; i < n; ++i) one_each.ids.push_back(i);
  return {"cpu", check::device_list_text(one_each)};
}

// "" when main printed the case's `# output:` lines (none: anything): as
// many lines, and every number within the case's tolerance.
std::string expected_output(const Expectation& ex, const std::string& got) {
  if (ex.output.empty()) return "";
  std::string want;
  for (const std::string& l : ex.output) want += l + "\n";
  size_t lines = static_cast<size_t>(std::count(got.begin(), got.end(), '\n'));
  if (lines != ex.output.size())
    return "main printed " + std::to_string(lines) + " lines, the case " +
           std::to_string(ex.output.size()) + ":\n" + got;
  std::string d = compare_outputs(
      want, got, ex.tolerance.value_or(kDefaultTolerance), "the case says");
  return d.empty() ? "" : d + " (printed:\n" + got + ")";
}

// Note [Runs as users run them]: on several devices a case runs through
// run_program_on_devices, the controller here and `ss worker` processes,
// as `ss run` runs it (cli.md); what main prints, what it writes to sinks
// and files, and its final params are compared with the one-device run's.
// `--engine threads` runs the ranks as threads of this process instead
// (devices::threads::run_data_parallel, each rank running main itself): one
// process under the sanitizers sees races on state the ranks share; the
// processes are what users run, and the only path with the controller's
// handles, fetches and messages.
enum class Engine { Processes, Threads };

// How the cases on several devices run: the engine, and with processes,
// where the workers go (`--hosts`: over TCP, as on several hosts).
struct Runner {
  Engine engine = Engine::Processes;
  HostOptions hosts;
  /// `--deterministic`: every case in deterministic mode (Note
  /// [Deterministic mode] in interp/devices/lower/chunks.h).
  bool deterministic = false;
};

// Sinks and checkpoints write relative to the working directory: each run
// gets a fresh one, so what it wrote is its own, and the suite leaves
// nothing behind (the workers inherit it when they start).
class ScratchDir {
 public:
  ScratchDir() : old_(fs::current_path()) {
    std::string t =
        (fs::temp_directory_path() / "ss_conformance_XXXXXX").string();
    if (!mkdtemp(t.data()))
      throw std::runtime_error("cannot make a scratch directory in " +
                               fs::temp_directory_path().string());
    path_ = t;
    fs::current_path(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::current_path(old_, ec);
    fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  fs::path old_;
  std::string path_;
};

// Runs main() when the program has one taking no arguments. Returns the
// runtime error's kind ("" when it ran clean) and its rendering.
struct RunResult {
  bool ran = false;
  std::string kind;
  std::string detail;
  std::string out;
  eval::FinalParams params;  // rank 0's
  std::string ranks_differ;  // "" when every rank's params are rank 0's
  CaseFiles files;           // what it wrote in its working directory
};

void run_threads(const check::Program& prog,
                 const diag::SourceMap& sm,
                 std::ostream& out,
                 RunResult& r) {
  std::vector<eval::FinalParams> ranks;
  devices::threads::ParallelOptions po;
  po.world = static_cast<int>(prog.devices().count());
  po.final_params = &ranks;
  if (auto e = devices::threads::run_data_parallel(prog, sm, out, po)) {
    r.kind = e->kind();
    r.detail = eval::render_runtime_error(*e, sm);
  } else {
    r.params = ranks.at(0);
    r.ranks_differ = compare_ranks(ranks);
  }
}

void run_processes(const check::Program& prog,
                   const diag::SourceMap& sm,
                   const std::string& devices,
                   const HostOptions& hosts,
                   std::ostream& out,
                   RunResult& r) {
  // GPUs this machine lacks: said once, as one device's run says it,
  // before any worker starts.
  if (std::string why = devices::unavailable_devices(prog); !why.empty()) {
    r.kind = "RunnerError";
    r.detail = "the runner cannot run on " + prog.devices().kind + ": " + why;
    return;
  }
  check::Options opts;
  opts.devices_override = devices;
  opts.deterministic = prog.devices().deterministic;
  devices::controller::DeviceRunOptions dro;
  dro.worker_args = devices::controller::worker_run_args(opts, "main", {});
  // Checked in cmd_conformance: these fit any count of ranks.
  if (!remote_options("conformance",
                      hosts,
                      static_cast<int>(prog.devices().count()),
                      dro.remote,
                      /*fit_slots=*/true))
    throw std::runtime_error("the host options do not fit this case");
  dro.final_params = true;
  // A worker's own output is not the program's (its tail comes with a
  // WorkerError).
  dro.forward_worker_output = false;
  devices::controller::DeviceRun run =
      devices::controller::run_program_on_devices(prog, sm, out, dro);
  r.kind = run.kind;
  r.detail = run.error;
  r.params = run.params;
  r.ranks_differ = compare_ranks(run.rank_params);
}

void run_one_device(const check::Program& prog,
                    const diag::SourceMap& sm,
                    std::ostream& out,
                    RunResult& r) {
  if (std::string why = devices::unavailable_devices(prog); !why.empty()) {
    r.kind = "RunnerError";
    r.detail = "the runner cannot run on " + prog.devices().kind + ": " + why;
    return;
  }
  try {
    eval::Interpreter in(prog, sm, out);
    // Deterministic mode: a rank of one, whose bits the others match.
    std::unique_ptr<devices::Context> deterministic =
        devices::one_device_context(prog);
    devices::Context plain;
    devices::Context& one_device = deterministic ? *deterministic : plain;
    one_device.keep_final_params();
    in.set_device_hooks(&one_device);
    in.run_main({});
    r.params = one_device.final_params();
  } catch (const eval::RuntimeError& e) {
    r.kind = e.kind();
    r.detail = eval::render_runtime_error(e, sm);
  }
}

RunResult run_main(const check::Program& prog,
                   const diag::SourceMap& sm,
                   const std::string& devices,
                   const Runner& how) {
  RunResult r;
  const check::FnInfo* main = prog.fn("main");
  if (!main || !main->params.empty()) return r;
  r.ran = true;
  // Each case's collective_timeout is its own, not the next case's.
  dist::reset_default_collective_timeout();
  std::ostringstream out;
  try {
    ScratchDir dir;
    if (prog.devices().count() <= 1)
      run_one_device(prog, sm, out, r);
    else if (how.engine == Engine::Threads)
      run_threads(prog, sm, out, r);
    else
      run_processes(prog, sm, devices, how.hosts, out, r);
    r.files = read_case_files(dir.path());
  } catch (const std::exception& e) {
    r.kind = "RunnerError";
    r.detail = std::string("the runner failed: ") + e.what();
  }
  r.out = out.str();
  return r;
}

Outcome run_case(const fs::path& file,
                 const std::string& text,
                 const Expectation& ex,
                 const std::string& devices,
                 const Runner& how,
                 const Outcome* one_device) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  check::Options opts;
  opts.devices_override = devices;
  opts.deterministic = how.deterministic;
  auto prog = check::check_source(file.string(), text, sm, diags, opts);
  Outcome o;
  // Compared with the one-CPU run: several devices, and one GPU (whose
  // reference is the CPU's, Note [Values on a GPU] in
  // interp/devices/one_device.cpp).
  const bool compared =
      one_device && prog &&
      (prog->devices().count() > 1 || prog->devices().kind != "cpu");
  if (ex.kind != Expectation::Kind::Error && !diags.empty()) {
    o.detail = "expected the program to check, got:";
    for (const auto& d : diags.list()) o.detail += "\n    " + describe(d, sm);
    return o;
  }
  if (ex.kind == Expectation::Kind::Ok) {
    RunResult r = run_main(*prog, sm, devices, how);
    o.out = r.out;
    o.params = r.params;
    o.files = r.files;
    o.pass = r.kind.empty();
    if (!o.pass) {
      o.detail = "expected ok, main raised:\n" + r.detail;
    } else if (std::string d = expected_output(ex, r.out); !d.empty()) {
      o.pass = false;
      o.detail = " not the `# output:` lines: " + d;
    } else if (!r.ranks_differ.empty()) {
      o.pass = false;
      o.detail = " the workers' copies differ: " + r.ranks_differ;
    } else if (compared) {
      // Deterministic mode promises one device's bits: no tolerance.
      double tol = prog->devices().deterministic
                       ? 0.0
                       : ex.tolerance.value_or(kDefaultTolerance);
      std::string diff = compare_outputs(one_device->out, r.out, tol);
      if (diff.empty())
        diff = compare_params(one_device->params, r.params, tol);
      if (diff.empty())
        diff = compare_files(
            one_device->files, r.files, tol, one_device->params.steps);
      o.pass = diff.empty();
      if (!o.pass) o.detail = " not the result of one device: " + diff;
    }
    return o;
  }
  if (ex.kind == Expectation::Kind::Runtime) {
    RunResult r = run_main(*prog, sm, devices, how);
    o.pass = r.kind == ex.runtime_kind;
    o.out = r.out;
    o.error_head = r.detail.substr(0, r.detail.find('\n'));
    if (!o.pass) {
      o.detail = "expected runtime " + ex.runtime_kind + ", got " +
                 (r.ran ? (r.kind.empty() ? "a clean run" : r.detail)
                        : "no fn main() to run");
    } else if (std::string d = expected_output(ex, r.out); !d.empty()) {
      // What main printed before the error.
      o.pass = false;
      o.detail = " not the `# output:` lines: " + d;
    } else if (compared && o.error_head != one_device->error_head) {
      // The same error as one device's: its location and message (the
      // notes say which worker raised it).
      o.pass = false;
      o.detail = " not one device's error: " + o.error_head +
                 "\n    one device: " + one_device->error_head;
    } else if (compared) {
      // What main printed before the error, too.
      std::string diff =
          compare_outputs(one_device->out,
                          r.out,
                          prog->devices().deterministic
                              ? 0.0
                              : ex.tolerance.value_or(kDefaultTolerance));
      o.pass = diff.empty();
      if (!o.pass) o.detail = " not the output of one device: " + diff;
    }
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
  std::vector<std::string> excluded;
  Runner how;
  bool missing_is_ok = false;
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
    } else if (a == "--exclude" && i + 1 < args.size()) {
      excluded.push_back(args[++i]);
    } else if (a == "--engine" && i + 1 < args.size()) {
      std::string e = args[++i];
      if (e != "processes" && e != "threads") {
        std::cerr << "ss conformance: --engine is processes or threads, not '"
                  << e << "'\n";
        return kExitUsage;
      }
      how.engine = e == "threads" ? Engine::Threads : Engine::Processes;
    } else if (ProgramOption o = host_option("conformance", args, i, how.hosts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (a == "--deterministic") {
      how.deterministic = true;
    } else if (a == "--missing-expect-ok") {
      missing_is_ok = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << command_help("conformance");
      return kExitOk;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "ss conformance: unknown option '" << a << "'\n";
      return kExitUsage;
    } else {
      dir = a;
    }
  }
  if (how.hosts.any()) {
    // Each case starts its workers: on hosts, not by hand (--listen alone).
    std::optional<dist::RemoteOptions> check;
    if (how.engine == Engine::Threads) {
      std::cerr << "ss conformance: --engine threads runs the ranks in this "
                   "process; hosts are for --engine processes\n";
      return kExitUsage;
    }
    if (how.hosts.hosts.empty() && how.hosts.hostfile.empty()) {
      std::cerr << "ss conformance: each case starts its own workers: give "
                   "--hosts or --hostfile\n";
      return kExitUsage;
    }
    if (!remote_options("conformance", how.hosts, 2, check, true))
      return kExitUsage;
  }
  // cli.md: by default every case on one, two and three CPU devices.
  if (device_sets.empty()) device_sets = {"cpu", "cpu[0 1]", "cpu[0 1 2]"};
  std::error_code ec;
  std::vector<fs::path> files;
  const bool one_case = fs::is_regular_file(dir, ec);
  if (one_case) {
    // One case: `ss conformance path/to/case.ss`.
    files.push_back(dir);
    dir = fs::path(dir).parent_path().string();
    if (dir.empty()) dir = ".";
  } else if (!fs::is_directory(dir, ec)) {
    std::cerr << "ss conformance: '" << dir
              << "' is neither a directory nor a case (.ss file)\n";
    return kExitUsage;
  }
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !one_case && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    if (it->is_regular_file() && it->path().extension() == ".ss")
      files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  int passed = 0, failed = 0;
  for (const fs::path& f : files) {
    std::string rel = fs::relative(f, dir, ec).string();
    if (!filter.empty() && fnmatch(filter.c_str(), rel.c_str(), 0) != 0)
      continue;
    if (std::any_of(
            excluded.begin(), excluded.end(), [&](const std::string& g) {
              return fnmatch(g.c_str(), rel.c_str(), 0) == 0;
            }))
      continue;
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string why;
    auto ex = parse_expectations(ss.str(), why, missing_is_ok);
    if (!ex) {
      std::cout << "FAIL " << rel << ": bad header: " << why << "\n";
      ++failed;
      continue;
    }
    std::vector<std::string> sets =
        ex->devices.empty() ? device_sets : ex->devices;
    if (ex->devices.empty())
      if (std::vector<std::string> m =
              mesh_device_sets(fs::absolute(f), ss.str());
          !m.empty())
        sets = m;
    std::optional<Outcome> one_device;  // the reference run
    for (const std::string& devs : sets) {
      // Note [One path for every run]: rand/randn draw from (seed, call
      // site), and the site names the file as it was given
      // (language.md, Randomness), so every run of a case, in this
      // process and on the workers (which start in a scratch directory),
      // checks the program from the same absolute path.
      Outcome o = run_case(fs::absolute(f),
                           ss.str(),
                           *ex,
                           devs,
                           how,
                           one_device ? &*one_device : nullptr);
      if (devs == "cpu" && o.pass) one_device = o;
      std::cout << (o.pass ? "PASS" : "FAIL") << " " << rel << " [" << devs
                << "]";
      if (!o.pass) std::cout << ":" << o.detail;
      std::cout << "\n";
      (o.pass ? passed : failed)++;
    }
  }
  std::cout << passed << " passed, " << failed << " failed\n";
  return failed ? kExitStatic : kExitOk;
}

}  // namespace ss::cli

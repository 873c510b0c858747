// The `run` fuzz target's runner (run_outcome.h).
#include "tests/fuzz/run_outcome.h"

#include <fcntl.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <exception>
#include <memory>
#include <sstream>
#include <typeinfo>

#include "interp/builtins/install.h"
#include "interp/check/checker.h"
#include "interp/devices/one_device.h"
#include "interp/embed/embed.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/runtime_error.h"
#include "ops/core/tensor.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/run_ref.h"

namespace ss::fuzz {

// Note [A runtime fuzzer's bounds]
// A run may take kRunSeconds and one allocation kAllocationBytes; past
// either is a finding (issue 32: "never a hang past a bound, or memory
// past a bound"). The time is an alarm whose handler aborts, naming the
// bound, so that libFuzzer and the replay keep the input as they keep a
// crash. The memory is ops::set_allocation_limit: a hostile size (2^31
// f32s, 2^62 rows) is the evaluator's own located ValueError before
// anything is allocated (Note [Tensors too large to allocate] in
// ops/core/tensor.cpp), the same on every machine, where the machine's
// memory would let an 8 GiB tensor be filled, and the sanitizer replay's
// max_allocation_size_mb (256) would report it. The bound is half the
// replay's, so an allocation the interpreter did not check against it (a
// std::vector sized by a hostile value) still shows under the sanitizers,
// while a tensor it allows stays below theirs with its padding.
// A run works in the scratch directory, so that a builtin given a path
// (`save("a", ...)`, a sink) writes there, never in the fuzzer's folder.

namespace {

constexpr uint64_t kAllocationBytes = uint64_t{128} << 20;

void on_alarm(int) {
  const char msg[] = "fuzz finding in ss run: a run past its time bound\n";
  (void)!::write(2, msg, sizeof msg - 1);
  std::abort();
}

// Arms the time bound and enters the scratch directory for one run.
struct Bounds {
  int cwd = -1;
  Bounds() {
    static const bool once = [] {
      builtins::install();  // as `ss`'s main does first
      std::signal(SIGALRM, on_alarm);
      return true;
    }();
    (void)once;
    // Each run: a test in the same process may have set another.
    ops::set_allocation_limit(kAllocationBytes);
    cwd = ::open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    (void)!::chdir(scratch_path("").c_str());
    ::alarm(kRunSeconds);
  }
  ~Bounds() {
    ::alarm(0);
    if (cwd >= 0) (void)!::fchdir(cwd), ::close(cwd);
  }
};

RunOutcome finding(std::string what) {
  return {RunOutcome::Kind::Finding, std::move(what)};
}

// The pipeline of `ss run` on one device (embed::run's path for a world
// of one): check, then the interpreter with the one-device context.
RunOutcome check_and_run(const std::string& text) {
  static const std::string path = scratch_path("fuzz_run.ss");
  diag::SourceMap sm;
  diag::Diagnostics diags;
  std::unique_ptr<check::Program> prog =
      check::check_source(path, text, sm, diags);
  if (!prog) return {RunOutcome::Kind::Static, ""};
  std::ostringstream out;
  std::unique_ptr<devices::Context> one = devices::one_device_context(*prog);
  // Note [A runtime fuzzer's oracle]: the one-device context's ops, each
  // builtin's value compared with ref's.
  RefOracle oracle(one.get());
  RunOutcome r{RunOutcome::Kind::Value, ""};
  try {
    eval::Interpreter in(*prog, sm, out);
    in.set_device_hooks(&oracle);
    in.run_main({}, "main");
  } catch (const eval::RuntimeError& e) {
    // A runtime error names its `.ss` site (errors.md); one without is
    // a finding too.
    if (e.span() == diag::Span{}) {
      r = finding("a " + e.kind() + " with no location: " + e.message());
    } else {
      (void)eval::render_runtime_error(e, sm);
      r = {RunOutcome::Kind::Runtime, e.kind()};
    }
  }
  const RefReport& seen = oracle.report();
  if (!seen.mismatch.empty() && r.kind != RunOutcome::Kind::Finding)
    r = {RunOutcome::Kind::Differs,
         "a value differs from ref: " + seen.mismatch};
  r.ref_compared = seen.compared;
  r.ref_declined = seen.declined;
  r.ref_unadapted = seen.unadapted;
  return r;
}

// Note [A runtime fuzzer on several devices]
// With SS_FUZZ_RUN_DEVICES (`cpu[0 1 2]`) and SS_FUZZ_WORKER (the `ss`
// binary) set, as ctest's fuzz_replay_run_devices sets them, the target
// also runs each program on that device list, through embed::run, the
// code `ss run` calls, its workers processes of `ss`. The outcomes must
// agree in kind, and a runtime error in its kind (conformance/README.md:
// on every device list the same kind); the printed values are not
// compared, as a draw or a reduction's order may differ by device list.
// It costs worker processes per input, so the libFuzzer runs and the
// million-input driver leave it off. A program the device list refuses
// with the checks of several devices alone (E18xx, E19xx: a value_and_grad
// or an update in `main`, which runs in the controller there: E1803) is
// refused by design, and left out of the comparison (RunOutcome's
// detail kDevicesOnly).
RunOutcome on_devices(const std::string& text,
                      const std::string& devices,
                      const std::string& worker) {
  std::string path = write_scratch("fuzz_run_devices.ss", text);
  embed::RunOptions opts;
  opts.load.devices = devices;
  opts.load.worker_command = {worker};
  // The workers' allocations under the same bound as this process's.
  opts.load.worker_env = {"SHAPESCRIPT_ALLOCATION_LIMIT=" +
                          std::to_string(kAllocationBytes)};
  std::ostringstream out, err;
  try {
    embed::run(path, opts, out, err);
  } catch (const embed::CheckFailed& e) {
    // The checks of several devices alone (E18xx, E19xx: docs/errors):
    // device work where `main` runs in the controller (value_and_grad,
    // update), the batch axis. The detail says so, for the comparison.
    bool devices_only = !e.problems.empty();
    for (const embed::Problem& p : e.problems)
      devices_only = devices_only && (p.code.rfind("E18", 0) == 0 ||
                                      p.code.rfind("E19", 0) == 0);
    return {RunOutcome::Kind::Static,
            devices_only ? kDevicesOnly : std::string()};
  } catch (const embed::Error& e) {
    if (e.kind == "WorkerError")
      return finding("a WorkerError on " + devices + ": " + e.text);
    return {RunOutcome::Kind::Runtime, e.kind};
  }
  return {RunOutcome::Kind::Value, ""};
}

}  // namespace

RunOutcome run_program_on_devices(const std::string& text,
                                  const std::string& devices,
                                  const std::string& worker) {
  RunOutcome r;
  Bounds bounds;
  try {
    r = on_devices(text, devices, worker);
  } catch (const std::exception& e) {
    r = finding(std::string("uncaught ") + typeid(e).name() + ": " + e.what());
  }
  return r;
}

RunOutcome run_program(const std::string& text) {
  RunOutcome r;
  on_deep_stack([&] {
    Bounds bounds;
    try {
      r = check_and_run(text);
    } catch (const std::exception& e) {
      r = finding(std::string("uncaught ") + typeid(e).name() + ": " +
                  e.what());
    } catch (...) {
      r = finding("an exception that is not a std::exception");
    }
  });
  return r;
}

}  // namespace ss::fuzz

// `ss`: the ShapeScript command. See ../shared/spec/cli.md.
#include <pthread.h>

#include <iostream>
#include <string>
#include <vector>

#include "dist/control/control.h"
#include "interp/builtins/install.h"
#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/cli/repl.h"
#include "ops/core/tensor.h"
#include "ops/cpu/cpu_backend.h"

namespace ss::cli {
int cmd_explain(const std::vector<std::string>& args);  // cmd_explain.cpp
int cmd_fmt(const std::vector<std::string>& args);      // cmd_fmt.cpp
}  // namespace ss::cli

namespace {

int dispatch(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::cerr << ss::cli::overview();
    return ss::cli::kExitUsage;
  }
  const std::string cmd = args[0];
  const std::string bad_env = ss::cli::bad_device_environment();
  if (!bad_env.empty()) {
    std::cerr << "ss: " << bad_env << "\n";
    return ss::cli::kExitUsage;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (cmd == "--version") {
    std::cout << "ss (ShapeScript) 0.1.0\n";
    return 0;
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << ss::cli::overview();
    return 0;
  }
  if (cmd == "worker") return ss::cli::cmd_worker(rest);  // hidden
  if (cmd == "check") return ss::cli::cmd_check(rest);
  if (cmd == "run") return ss::cli::cmd_run(rest);
  if (cmd == "repl") return ss::cli::run_repl(rest);
  if (cmd == "conformance") return ss::cli::cmd_conformance(rest);
  if (cmd == "explain") return ss::cli::cmd_explain(rest);
  if (cmd == "lsp") return ss::cli::cmd_lsp(rest);
  if (cmd == "fmt") return ss::cli::cmd_fmt(rest);
  std::cerr << "ss: unknown command '" << cmd << "'\n\n" << ss::cli::overview();
  return ss::cli::kExitUsage;
}

// Note [A deep stack]: the checker and the evaluator are recursive (an
// expression's tree, a `.ss` call per C++ frames), and the language allows
// 2,000 nested calls; the main thread's 8 MiB overflowed at 1,600 (a
// SIGSEGV, issue 16). Every command runs on a thread whose stack is
// reserved large: untouched pages cost nothing, and the limits of the
// parser (kMaxDepth) and the evaluator (2,000 calls) stay far inside it,
// under the sanitizers' larger frames too.
constexpr size_t kStackBytes = size_t{1} << 30;

struct Job {
  const std::vector<std::string>* args;
  int rc = 0;
};

void* run_job(void* p) {
  auto* job = static_cast<Job*>(p);
  try {
    job->rc = dispatch(*job->args);
  } catch (const std::bad_alloc&) {
    // A last resort: allocations that can fail are reported where they
    // happen (Note [Tensors too large to allocate]).
    std::cerr << "ss: out of memory\n";
    job->rc = ss::cli::kExitRuntime;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  // What is the whole process's is `ss`'s to set, first (issue 27: the
  // same library in a host language's process sets none of it).
  ss::ops::keep_step_buffers_in_heap();
  ss::ops::allow_cpu_warm_up();  // settled below, before exit
  ss::dist::clean_up_workers_on_exit();
  // Note [The runtime table]: every builtin can run before anything does.
  ss::builtins::install();
  std::vector<std::string> args(argv + 1, argv + argc);
  Job job{&args};
  pthread_attr_t attr;
  pthread_t t;
  if (pthread_attr_init(&attr) == 0 &&
      pthread_attr_setstacksize(&attr, kStackBytes) == 0 &&
      pthread_create(&t, &attr, run_job, &job) == 0) {
    pthread_attr_destroy(&attr);
    pthread_join(t, nullptr);
    ss::ops::settle_cpu_backend();
    return job.rc;
  }
  // No thread to be had: the main thread's stack.
  const int rc = dispatch(args);
  ss::ops::settle_cpu_backend();
  return rc;
}

// Fuzz target: source text through `ss check`'s pipeline (lexer, parser,
// checker, with the standard library, as cmd_check.cpp runs it), and the
// diagnostics rendered for the terminal and as --json; a checked program's
// --types too. No evaluation. Every outcome is diagnostics or a program;
// any exception is a finding (Note [What a fuzz target calls a finding]).
#include <pthread.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "interp/check/checker.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

// On a stack as large as `ss` gives every command (Note [A deep stack] in
// interp/cli/main.cpp: 1 GiB, reserved, not touched): the checker's depth
// limits are set for that stack, so the main thread's 8 MiB would report
// nesting that `ss` accepts as a stack overflow. One thread serves every
// input: ASan clears the shadow of a thread's whole stack (128 MiB for
// 1 GiB) when it ends, which made a thread per input 90% of the time.
constexpr size_t kStackBytes = size_t{1} << 30;

void check(const uint8_t* data, size_t size) {
  using namespace ss;
  // In the scratch directory, so that a relative `import` looks there
  // (and finds nothing) rather than in the fuzzer's working directory.
  static const std::string path = fuzz::scratch_path("fuzz.ss");
  fuzz::expect_user_errors("ss check", [&] {
    diag::SourceMap sm;
    diag::Diagnostics diags;
    std::string text(reinterpret_cast<const char*>(data), size);
    auto prog = check::check_source(path, std::move(text), sm, diags);
    (void)diag::render_terminal(diags, sm);
    (void)diag::render_json(diags, sm);
    if (prog) (void)check::describe_types(*prog);
  });
}

// The deep-stack thread and the one input it is given at a time.
struct DeepStack {
  std::mutex mu;
  std::condition_variable cv;
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool pending = false;

  DeepStack() {
    pthread_attr_t attr;
    pthread_t t;
    if (pthread_attr_init(&attr) != 0 ||
        pthread_attr_setstacksize(&attr, kStackBytes) != 0 ||
        pthread_create(&t, &attr, &DeepStack::serve, this) != 0) {
      std::fprintf(stderr, "fuzz_check: no thread with a 1 GiB stack\n");
      std::abort();
    }
    pthread_attr_destroy(&attr);
    pthread_detach(t);  // it serves until the process exits
  }

  static void* serve(void* p) {
    auto* self = static_cast<DeepStack*>(p);
    std::unique_lock<std::mutex> lock(self->mu);
    for (;;) {
      self->cv.wait(lock, [&] { return self->pending; });
      check(self->data, self->size);
      self->pending = false;
      self->cv.notify_all();
    }
  }

  void run(const uint8_t* d, size_t n) {
    std::unique_lock<std::mutex> lock(mu);
    data = d;
    size = n;
    pending = true;
    cv.notify_all();
    cv.wait(lock, [&] { return !pending; });
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static DeepStack* stack = new DeepStack;  // never ends: never destroyed
  stack->run(data, size);
  return 0;
}

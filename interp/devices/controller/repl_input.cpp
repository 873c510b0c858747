// Note [Repl inputs on devices]
// `ss repl --devices 'cpu[0 1]'` (or a session whose devices line names
// several) runs each input's statements as `ss run` runs main: in an
// Interpreter with the ControllerContext, so a call of a worker fn goes to
// the workers, and a model or optimizer a call changed is copied back when
// read. The workers check the session's program as it is for that input
// (the repl writes it to a file: the text and its spans are the
// controller's), so they are started at the input's first call of a
// worker fn and stopped at its end: the next input may have new
// declarations. Before they stop, every model and optimizer the session
// holds is copied back and its handle id cleared, so the next input's
// workers receive it whole, and handles survive across inputs. When the
// input fails, what the workers hold newer is copied back if it can be:
// after an error every rank raised alike (a ValueError in a worker fn: the
// session goes on from the last good step, as on one device) or Ctrl-C
// between calls (the loop's model keeps the weights it reached, as in
// PyTorch). After a WorkerError the ranks' copies may disagree, and Ctrl-C
// during a call stops the workers: those stores are the caller's [lost],
// whose handles the repl drops with an error saying the devices' state is
// gone.
// What is not done: workers that live across inputs and receive new
// declarations as text (issue 14 item 1).
#include "interp/devices/controller/repl_input.h"

#include "interp/devices/controller/controller.h"
#include "interp/devices/controller/controller_context.h"
#include "interp/eval/objects.h"

namespace ss::devices {

using VK = eval::Value::Kind;

namespace {

// Every store [v] holds, to copy back or to mark lost.
void each_store(const eval::Value& v,
                const std::function<void(eval::ModelStore&)>& model,
                const std::function<void(eval::OptimState&)>& optim) {
  switch (v.kind) {
    case VK::Model:
    case VK::Grads:
      model(*v.as<eval::ModelRef>()->store);
      break;
    case VK::Optim: {
      auto* o = v.as<eval::OptimState>();
      optim(*o);
      model(*o->model);
      break;
    }
    case VK::Tuple:
    case VK::List:
      if (v.items)
        for (const eval::Value& i : *v.items) each_store(i, model, optim);
      break;
    default:
      break;
  }
}

}  // namespace

void stores_of(const eval::Value& v, std::set<const void*>& out) {
  each_store(
      v,
      [&](eval::ModelStore& s) { out.insert(&s); },
      [&](eval::OptimState& o) { out.insert(&o); });
}

void run_input_on_devices(eval::Interpreter& in,
                          const check::Program& prog,
                          const diag::SourceMap& sm,
                          const std::vector<std::string>& worker_args,
                          diag::Span input,
                          const std::function<void()>& body,
                          const std::function<std::vector<eval::Value>()>& held,
                          volatile int* interrupted,
                          std::set<const void*>& lost) {
  dist::LaunchOptions lo = worker_launch_options(prog, worker_args);
  lo.interrupted = [interrupted] { return *interrupted != 0; };
  LazyPool pool(lo);
  Controller c(pool, prog, sm, in);
  ControllerContext context(c);
  in.set_device_hooks(&context);
  auto stop = [&] {
    in.set_device_hooks(nullptr);
    if (dist::WorkerPool* p = pool.started()) p->stop();
  };
  try {
    try {
      body();
      in.settle();
      for (const eval::Value& v : held())
        each_store(
            v,
            [](eval::ModelStore& s) {
              eval::sync(s);
              s.remote_id = 0;
            },
            [](eval::OptimState& o) {
              eval::sync(o);
              o.remote_id = 0;
            });
    } catch (const eval::RuntimeError&) {
      throw;
    } catch (const dist::Interrupted&) {
      throw eval::RuntimeError("KeyboardInterrupt", "interrupted", input);
    } catch (const std::exception& e) {
      // The workers failing to start or outside a call (ss run's
      // unlocated WorkerError), at the input here.
      throw eval::RuntimeError("WorkerError", e.what(), input);
    }
  } catch (const eval::RuntimeError& e) {
    // What the workers held newer than here is copied back if it still
    // can be: after an error every rank raised alike (a ValueError in a
    // worker fn) or Ctrl-C between two calls, as a PyTorch loop keeps the
    // weights it reached. After a WorkerError the ranks' copies may
    // disagree: the devices' state is gone.
    *interrupted = 0;
    const bool copy_back = e.kind() != "WorkerError";
    auto forget = [&](auto& s) {
      if (s.newer_on == &context) {
        bool copied = copy_back;
        if (copied) {
          try {
            eval::sync(s);
          } catch (...) {
            copied = false;  // the workers stopped (Ctrl-C during a call)
          }
        }
        if (!copied) lost.insert(&s);
      }
      s.newer_on = nullptr;
      s.remote_id = 0;
    };
    for (const eval::Value& v : held())
      each_store(
          v,
          [&](eval::ModelStore& s) { forget(s); },
          [&](eval::OptimState& o) { forget(o); });
    try {
      stop();
    } catch (...) {
    }
    throw;
  }
  stop();
}

}  // namespace ss::devices

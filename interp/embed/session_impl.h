#pragma once
// What a Session holds (embed.h), shared by the files of interp/embed that
// implement it. Private to interp/embed.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "interp/check/checker.h"
#include "interp/devices/controller/repl_devices.h"
#include "interp/devices/one_device.h"
#include "interp/devices/protocol/session_text.h"
#include "interp/embed/embed.h"
#include "interp/eval/interpreter.h"

namespace ss::embed {

/// One host call's text, checked, and the Interpreter that runs it.
struct Compiled {
  std::unique_ptr<diag::SourceMap> sm;
  std::unique_ptr<check::Program> prog;
  /// One device in deterministic mode: the chunks a rank runs.
  std::unique_ptr<devices::Context> one;
  std::unique_ptr<eval::Interpreter> in;
  const check::FnInfo* fn = nullptr;
};

struct Session::Impl {
  // Where calls run (Note [Switching to the deep stack] in
  // deep_stack.cpp): on one device on the caller's thread, switched to
  // [stack]; with workers on [deep], the thread that started them (their
  // PR_SET_PDEATHSIG follows it), as the load always does.
  DeepThread deep;  // first: it goes last, after the workers
  DeepStack stack;
  bool on_stack = false;
  std::function<void()> poll;
  LoadOptions opts;
  std::ostream* out = nullptr;
  check::Options check_opts;
  devices::protocol::SessionText decls;  // the file, as the workers check it
  std::unique_ptr<diag::SourceMap> decl_sm;
  std::unique_ptr<check::Program> decl_prog;
  volatile int interrupted = 0;
  std::unique_ptr<devices::controller::ReplDevices> workers;
  std::map<std::string, std::unique_ptr<Compiled>> cache;
  std::set<std::string> global_names;  // fns, models, records, dims

  /// [params] and [body] as a fn of the host's, checked (cached by text).
  Compiled& compile(const std::string& params, const std::string& body);
  /// Runs [c]'s fn with [args] (its parameters' values): its trailing
  /// expression's value with its checked type.
  Value run(Compiled& c, const std::vector<eval::Value>& args);
  /// Runs [body] as [c]'s code: on several devices as the controller.
  void as_controller(Compiled& c, const std::function<void()>& body);

  /// [f]'s result, computed on the deep thread.
  template <class F>
  auto on_deep(F f) -> decltype(f()) {
    std::optional<decltype(f())> out;
    if (on_stack)
      stack.run([&] { out.emplace(f()); });
    else
      deep.run([&] { out.emplace(f()); }, poll);
    return std::move(*out);
  }
};

}  // namespace ss::embed

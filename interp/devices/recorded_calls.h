#pragma once
// Recorded steps on a GPU: a call entering device work, recorded once as
// the device's work (a CUDA graph) and replayed on the same bytes (Note
// [Recorded steps] in recorded_calls.cpp).

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "interp/check/checked.h"
#include "interp/eval/value.h"
#include "ops/core/tensor.h"

namespace ss::eval {
class Interpreter;
}

namespace ss::devices {

class RecordedCalls {
 public:
  /// What a rank of several adds (Note [A recorded step's collectives] in
  /// dist/comm/nccl/nccl_comm.cpp): [before_end] runs as a recording's
  /// work has been queued, before it ends (its collectives joined);
  /// [after_replay] after each replay (the host waits for its
  /// collectives, as a collective's call would).
  struct RankHooks {
    std::function<void()> before_end, after_replay;
  };
  /// Recording on [device] (a GPU), unless SHAPESCRIPT_RECORD_STEPS=0
  /// or its backend records nothing.
  explicit RecordedCalls(ops::Device device, RankHooks hooks = {});
  ~RecordedCalls();
  RecordedCalls(const RecordedCalls&) = delete;
  RecordedCalls& operator=(const RecordedCalls&) = delete;

  /// A call of [fn] entering device work (eval::enters_workers) at [site]:
  /// its value, probed, recorded or replayed; nullopt: run it as usual.
  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site);

  struct Entry;

 private:
  eval::Value run(eval::Interpreter& in,
                  const check::FnInfo& fn,
                  std::vector<eval::Value> args,
                  diag::Span site);
  std::optional<eval::Value> record(eval::Interpreter& in,
                                    const check::FnInfo& fn,
                                    std::vector<eval::Value>& args,
                                    diag::Span site,
                                    const std::string& key,
                                    Entry& e);
  std::optional<eval::Value> replay(std::vector<eval::Value>& args, Entry& e);
  void say(const check::FnInfo& fn, const std::string& what);

  /// Replays [e]'s step, its host effects first; then waits for it where
  /// a rank's hooks or its host calls say so.
  void replay_step(Entry& e);

  ops::Device device_;
  RankHooks hooks_;
  bool on_ = false, verbose_ = false;
  bool inside_ = false;  // running a call this object started
  /// By fn, then by the host signature of its arguments.
  std::map<const check::FnInfo*, std::map<std::string, std::unique_ptr<Entry>>>
      entries_;
};

}  // namespace ss::devices

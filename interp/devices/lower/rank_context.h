#pragma once
// A rank's context (Note [Device hooks] in interp/eval/device_hooks.h): the
// eval::Interpreter of one rank of a data-parallel run, a worker process's
// (worker/program_server.cpp) or a rank thread's (threads/). A call from a
// controller frame into a worker fn runs on this rank's share of each
// batch-axis argument and joins a batch-axis result in rank order
// (devices.md items 3 and 6); reductions across the batch axis become
// all-reduces and value_and_grad's gradients are summed across the ranks
// (Note [Same result as one device] in lowering.cpp). With `split H`
// every rank has the whole batch and the values typed with H hold its
// heads (Note [Split heads] in interp/check/plan/heads_plan.cpp).

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interp/devices/context.h"
#include "interp/devices/lower/chunked_sites.h"
#include "interp/devices/lower/gathered_copies.h"
#include "interp/devices/lower/heads_sites.h"
#include "interp/devices/lower/lowering.h"
#include "interp/devices/lower/param_buckets.h"
#include "interp/devices/recorded_calls.h"

namespace ss::devices::lower {

class RankContext : public Context {
 public:
  /// [d]: the rank, the world and its communicator; not owned.
  explicit RankContext(DeviceContext& d) : d_(d) {}

  std::optional<eval::Value> call(eval::Interpreter& in,
                                  const check::FnInfo& fn,
                                  std::vector<eval::Value>& args,
                                  diag::Span site) override;
  void bind_call(eval::Interpreter& in,
                 const check::FnInfo& fn,
                 eval::Frame& callee,
                 diag::Span site,
                 const std::vector<types::Type>* arg_types,
                 bool remat,
                 std::vector<eval::ParamShare>& shares) override;
  /// Every op (Note [Op sites]): a param read of a sharded param gathered
  /// (shards.cpp), `split H`'s plan (heads_sites.h), in deterministic mode
  /// the chunks (chunked_sites.h), else a reduction across the batch axis
  /// lowered (lowering.cpp), a host effect once.
  eval::Value run_op(eval::OpSite& s) override;
  eval::Placement placement() const override;
  std::optional<std::vector<ops::Tensor>> gradients(
      const ops::Tensor& loss,
      const std::vector<ops::Tensor>& leaves,
      const std::vector<bool>& pieces,
      diag::Span at,
      std::optional<double> scale) override;
  ops::Tensor sum_over_pieces(const ops::Tensor& partial) override;
  std::optional<ops::Tensor> whole_for_sums(const eval::ModelRef& m,
                                            const std::string& path) override;
  void tape_released() override {
    bucket_ = GatheredBucket{};  // first: it holds copies no value does
    copies_.present_live();
    chunks_.forget_stack_reads();
  }

 private:
  /// An spmd fn called from a worker fn: this rank's instance, on its
  /// block of the whole arguments, and the result joined over the ranks
  /// (Note [Spmd fns on workers]; rank_spmd.cpp).
  std::optional<eval::Value> call_spmd(eval::Interpreter& in,
                                       const check::FnInfo& fn,
                                       std::vector<eval::Value>& args,
                                       diag::Span site);
  /// A reduction across the batch axis (check::ExprInfo::allreduce): its
  /// global value; nullopt where it runs as one device does.
  std::optional<eval::Value> lower_reduction(eval::BuiltinCall& c);
  /// A builtin with a host effect (files, checkpoints, progress bars):
  /// what this rank does, or nullopt to run it as one device does.
  std::optional<eval::Value> host_effect(eval::BuiltinCall& c);
  /// `shard params`: param [path] of [m] (relative to its prefix), of
  /// which the store holds this rank's piece (eval::ModelStore::whole),
  /// gathered whole where the program reads it at [at]; its gradient
  /// flows back to the piece. nullopt: read it as one device does.
  std::optional<ops::Tensor> gather_param(const eval::ModelRef& m,
                                          const std::string& path,
                                          diag::Span at);
  /// `shard params`: [v], the whole new value of param [path] of [m]
  /// (`m.w = v`, every rank alike), stored as this rank's piece of it (a
  /// stack's one model: the whole param gathered, its model replaced, cut
  /// again). False: write it as one device does.
  bool write_param(const eval::ModelRef& m,
                   const std::string& path,
                   const ops::Tensor& v,
                   diag::Span at);
  /// A param read as one device reads it; in deterministic mode one of a
  /// stack is noted as such (ChunkedSites::note_stack_read).
  eval::Value read_param(eval::OpSite& s);
  /// `split H`: whether values typed with the split dim hold this rank's
  /// heads (Note [Split heads] in interp/check/plan/heads_plan.cpp).
  bool splits_heads() const;
  /// Deterministic mode, on the first call into the workers: every rank
  /// computes with the same kernels, or a ValueError at [site] (Note
  /// [Same kernels everywhere]).
  void check_same_kernels(eval::Interpreter& in, diag::Span site);
  bool kernels_checked_ = false;
  /// A GPU rank of several: its calls into the workers recorded and
  /// replayed (Note [Recorded steps] in interp/devices/recorded_calls.cpp),
  /// made at the first.
  std::unique_ptr<RecordedCalls> recorded_;
  /// Replaces each batch-axis argument of [fn] by this rank's rows.
  void split_arguments(const check::FnInfo& fn, std::vector<eval::Value>& args);
  /// [v] (of type [t]) with its batch-axis parts joined across the ranks,
  /// and a model or gradients of pieces gathered whole, unless its store is
  /// one of [sent]'s (the controller's handle: Note [Sharded params]).
  eval::Value join_result(const check::FnInfo& fn,
                          eval::Value v,
                          const types::Type& t,
                          const std::set<const eval::ModelStore*>& sent);

  /// `shard params`: the bucket the last gather fetched, whose copies the
  /// other reads on its line take (Note [Param buckets]).
  struct GatheredBucket {
    const eval::ModelStore* store = nullptr;
    uint32_t file = 0, line = 0;
    std::vector<std::string> keys;
    std::vector<ops::Tensor> pieces, wholes;  // wholes: untaped
    std::shared_ptr<const BucketMembers> members;
    /// Whether the read of [key] (its piece [piece]) at [file]:[line]
    /// finds its copy here.
    bool holds(const eval::ModelStore& s,
               const std::string& key,
               const ops::Tensor& piece,
               uint32_t file,
               uint32_t line) const;
  };
  /// The line of [at] (its offset without the program's text).
  uint32_t line_of(diag::Span at) const;

  DeviceContext& d_;
  const diag::SourceMap* sources_ = nullptr;
  GatheredBucket bucket_;
  bool splitting_ = false;   // inside the entry call that split its args
  GatheredCopies copies_;    // Note [Gathered copies]
  ChunkedSites chunks_{d_};  // Note [Chunked sites]
  HeadsSplit heads_{d_, chunks_};
};

}  // namespace ss::devices::lower

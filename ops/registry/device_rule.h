#pragma once
// Note [An op's rule on several devices]
// Every builtin's OpDef holds its whole rule on several devices
// (library.md's table; devices.md items 3-5), and every reader reads it
// there: the checker's placement (host effects, device work, the fns a
// builtin calls) and batch-axis checks (E1801, E1802, E1901), `ss explain`'s
// byte counts, and the rank's lowering (interp/devices/lower), which runs
// the entry's collective generically. No name of an op is matched outside
// ops/ to find its rule (scripts/check_layers.py checks it).
//
// A rule is one of: per example (each worker runs the op on its share
// unchanged), a lowering (across the batch axis: each rank computes a
// partial from its share, a collective combines the partials, and each
// rank finishes the whole batch's value from the combined payload), refused
// (across the batch axis with no lowering: E1801 with the entry's help), or
// a host call (it runs in the controller, and says what it does there).
//
// `split H` reads DeviceRule::heads: how the op treats an axis split
// across the devices by heads (per head, a partial product that an
// all-reduce finishes, a gather). Room for the next issue: manual SPMD each
// op's varying rule beside `sets_varying` (the union of its operands' mesh axes
// unless the rule says otherwise); both are fields of this struct, read by the
// same readers.
//
// ops/ never includes interp/: everything here is ops-level (tensors,
// ForwardCtx, enums, words); the devices layer owns the communicator.

#include <cstdint>
#include <functional>
#include <vector>

#include "ops/core/tensor.h"
#include "ops/registry/forward_ctx.h"

namespace ss::ops {

/// The collective a lowering hands its payload to.
enum class Collective : uint8_t {
  AllReduceSum,  // every rank's payload summed, elementwise
};

/// Spelled as `ss explain` prints it ("all-reduce").
inline const char* collective_name(Collective c) {
  switch (c) {
    case Collective::AllReduceSum:
      return "all-reduce";
  }
  return "all-reduce";
}

/// An spmd collective as `ss explain` lists it in a mesh program's table
/// (docs/explain.md, "Mesh programs"): each instance hands its operand's
/// block to [op] ("all-reduce"), which [effect]s the group's blocks
/// ("adds up"; null [op]: no data moves, as pvary); in the backward pass
/// the transpose [transpose] (spmd.md's table) hands the cotangent of the
/// result, a block of the result's type, to [backward_op] (null: no data
/// moves, as psum's pvary).
struct MeshPayload {
  const char* op = nullptr;
  const char* effect = nullptr;
  const char* backward_op = nullptr;
  const char* transpose = nullptr;
};

/// The payload a lowering sends, as a function of the call's checked types,
/// so that `ss explain` counts it without running anything:
/// count = times × (the factor) + plus values of the dtype.
struct PayloadSize {
  enum class Of : uint8_t {
    One,          // no factor: count = times + plus
    ResultNumel,  // the result's element count (mean: one sum per value)
    ArgAxis,      // the size of axis [axis] of param [arg] (batch_norm's C)
  };
  enum class DType : uint8_t {
    Result,  // the result's dtype
    // The dtype the share sums in: the result's when it is f32 or f64,
    // else f32 (a mean of ints; a bf16 or f16 mean, summed in f32: Note
    // [Half-precision means] in ops/defs/batch_lowering.cpp).
    ComputeFloat,
    F64,
  };
  Of of = Of::ResultNumel;
  int arg = 0;
  int axis = 0;
  int64_t times = 1;
  int64_t plus = 0;
  DType dtype = DType::Result;
};

/// A rank's part of a lowering: the payload it sends and how it finishes
/// the whole batch's value from the combined payload (written with
/// ops/api.h, so gradients follow through the collective's VJP).
struct Share {
  Tensor send;
  std::function<std::vector<Tensor>(const Tensor& combined)> finish;
  /// A result with the batch axis (batch_norm's), also in two parts,
  /// which deterministic mode runs apart (Note [Chunked sites] in
  /// interp/devices/lower/chunked_sites.h): [whole] once, from the
  /// combined payload (the statistics, and side effects such as running
  /// statistics), and [rows] for some rows of argument 0 from whole's
  /// results. finish is rows of the share's argument 0; both null where
  /// the result has no batch axis.
  std::function<std::vector<Tensor>(const Tensor& combined)> whole;
  std::function<Tensor(const Tensor& rows, const std::vector<Tensor>& whole)>
      rows;
};
using ShareFn = Share (*)(ForwardCtx& ctx);

struct Lowering {
  Collective collective = Collective::AllReduceSum;
  ShareFn share = nullptr;
  PayloadSize size;
  /// What each rank sends, in the checker's words (ExprInfo's
  /// allreduce_payload): "2 values: a sum and a count".
  const char* sends = "";
  /// The same in `ss explain`'s, after the op's name: "'s sum and count";
  /// [explain_many] when the count is not known to be 1 (null: the same).
  const char* explain_one = "";
  const char* explain_many = nullptr;
  /// Lowered only when param [only_param] is absent (its default is
  /// [only_with]) or given the builtin [only_with] (reduce(with=sum)); with
  /// another it is refused, as `reduce(with=max)`.
  int only_param = -1;
  const char* only_with = nullptr;
  /// In Eval mode (param [eval_mode_param] not a Train mode) the op runs
  /// per example and sends nothing (batch_norm's running statistics).
  int eval_mode_param = -1;
  /// With param [per_example_param] given the string [per_example_with]
  /// the op runs per example and sends nothing (a loss's
  /// reduction="none": each example's loss, split as the batch is).
  int per_example_param = -1;
  const char* per_example_with = nullptr;
};

/// How the checker finds a call that works across the batch axis.
enum class Across : uint8_t {
  Over,       // its over= names the batch axis (ops along an axis)
  Reduction,  // over= names it, or over= is absent (every axis)
  Indexing,   // over= names it, and the op indexes or moves data there
  Operands,   // an operand has the batch axis (cross_entropy's mean)
  AxisArgs,   // an Axis argument is the batch axis (causal)
  SizeOf,     // its result is an axis's size (size, len): E1802
};

/// What a host call does in the controller (placement's reason).
enum class HostEffect : uint8_t {
  None,              // computes on the host (range, typeof, Train, init)
  Prints,            // print
  SavesCheckpoint,   // save
  LoadsCheckpoint,   // load, load_into
  WritesSink,        // write
  MakesSink,         // stdout, tee
  MakesFileSink,     // csv, jsonl: every other rank writes to stdout
  MakesDataset,      // dataset, mnist, synthetic_digits
  LoopsOverDataset,  // mean_logs
  ShowsProgress,     // progress
  SetsTimeout,       // collective_timeout
  ReadsHostNumber,   // float, int, str of a tensor
};

/// The longest collective timeout, 366 days, for collective_timeout(s)
/// and $SHAPESCRIPT_COLLECTIVE_TIMEOUT alike (dist/comm's parser): a
/// stuck collective is still reported in a year, and its count of
/// milliseconds stays far inside an int64 (1e308 s once overflowed it to
/// a negative timeout: issue 32's runtime fuzzer).
inline constexpr double kMaxCollectiveTimeoutS = 366.0 * 24 * 3600;

/// A fn value a builtin calls (its param 0), and with what.
enum class FnArg : uint8_t {
  None,
  Differentiates,  // value_and_grad, grad: f(m, args...) on the tape
  PerBatch,        // mean_logs: f(m, batch) for each batch
};

// Note [An op in parts under split H]
// A builtin that reads a model's params (linear: x @ l.w + l.b) would run
// whole under `split H`, on its params gathered. Megatron runs it as the
// ops it is made of instead, each by its own rule: with l: Linear[D (H Dh)]
// a column-parallel product (x @ w on each device's columns, + b per
// head: no message), with Linear[(H Dh) D] a row-parallel one (each
// device's partial x @ w all-reduced, then + b once, after the sum). The
// op's heads_parts gives its parts' rules and types from the call's
// types; its forward hands each part, in that order, to ForwardCtx::part,
// which plans it as the evaluator plans an op written in the program; and
// `ss explain` lists each part's collectives from the same list.
struct HeadsPart;
using HeadsParts = std::vector<HeadsPart> (*)(
    const std::vector<types::Type>& arg_types, const types::Type& result);

struct DeviceRule {
  enum class Kind : uint8_t { PerExample, Lowered, Refused, Host };
  Kind kind = Kind::PerExample;
  /// `split H`: how the op treats operands split by heads (Note [Split
  /// heads] in interp/check/plan/heads_plan.cpp). PerHead: each device
  /// runs it on its heads unless its over= names H; Sums: the same, and
  /// where it sums H away (a contraction, sum) each device's partial sum
  /// is all-reduced; Gathers: the split operands are gathered and the op
  /// runs whole (every op not known to be per head: draws, sizes, ...).
  enum class Heads : uint8_t { PerHead, Sums, Gathers };
  Heads heads = Heads::Gathers;
  /// An op that reads a model's params, run under `split H` as its parts
  /// (Note [An op in parts under split H]); null: the op is one part.
  HeadsParts heads_parts = nullptr;
  Across across = Across::Over;
  /// With this param given the op is elementwise, not a reduction:
  /// max(x, y).
  const char* elementwise_with = nullptr;
  /// E1801's help for a refused call (null: the lowered ops' list).
  const char* refused_help = nullptr;
  const Lowering* lowering = nullptr;  // Kind::Lowered
  HostEffect host = HostEffect::None;  // Kind::Host
  /// A host call that may be given split data (no E1901): it reads only
  /// the type (typeof) or passes the data on (progress, batches, mean_logs).
  bool takes_split = false;
  /// Device work (E1803 in a controller fn): value_and_grad, grad, update.
  bool device_work = false;
  FnArg fn_arg = FnArg::None;
  /// The param that gives the batch size the op makes (batches' n):
  /// explain's example split.
  int batch_size_param = -1;
  /// In an spmd fn the shape rule sets the result's varying axes itself
  /// (psum and its kin); otherwise they are the operands' union.
  bool sets_varying = false;
  /// A collective over mesh axes, which every instance must reach
  /// (psum, all_gather, ppermute, ...): E2006 under a condition that
  /// varies over the mesh.
  bool collective = false;
  /// Inside an spmd fn every instance takes part, as in a collective
  /// (value_and_grad, grad: Note [A gradient inside an instance] in
  /// mesh_comm.h): E2006 under a condition that varies over the mesh too.
  bool meets_instances = false;
  /// Given a model's gradients it sums their squares (norm, clip_norm):
  /// with `shard params` each device sums its pieces' and an all-reduce
  /// of that one number (f64) adds them up.
  bool sums_grad_pieces = false;
  /// A collective of spmd fns: what it sends, for `ss explain`.
  const MeshPayload* mesh_payload = nullptr;
};

/// One part of an op run in parts under `split H`: its rule and the types
/// of its tensor operands and result, as if written in the program.
struct HeadsPart {
  DeviceRule::Heads rule = DeviceRule::Heads::Gathers;
  std::vector<types::Type> operands;
  types::Type result;
  /// The axes of operands[0] the part works along, as an over= (a heads
  /// axis there is gathered: scaled_dot_product_attention's matrices).
  std::vector<int> over = {};
};

inline DeviceRule per_example() {
  return {};
}
/// [help] may show the call rewritten with lowered ops: `{x}` stands for
/// the operand as written, `{b}` for the batch axis.
inline DeviceRule refused(Across across = Across::Over,
                          const char* help = nullptr) {
  DeviceRule r;
  r.kind = DeviceRule::Kind::Refused;
  r.across = across;
  r.refused_help = help;
  return r;
}
inline DeviceRule lowered(const Lowering& l, Across across) {
  DeviceRule r;
  r.kind = DeviceRule::Kind::Lowered;
  r.across = across;
  r.lowering = &l;
  return r;
}
/// [d] (an OpDef) with its rule under `split H` set to [h].
template <typename Def>
Def with_heads(Def d, DeviceRule::Heads h) {
  d.device.heads = h;
  return d;
}
/// [d] (an OpDef) run in [parts] under `split H`.
template <typename Def>
Def with_heads_parts(Def d, HeadsParts parts) {
  d.device.heads_parts = parts;
  return d;
}
inline DeviceRule host(HostEffect effect = HostEffect::None) {
  DeviceRule r;
  r.kind = DeviceRule::Kind::Host;
  r.host = effect;
  return r;
}

}  // namespace ss::ops

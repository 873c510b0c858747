#pragma once
// `ss explain` (devices.md, "The `ss explain` report";
// seeds/several-devices.md, "Placement and communication on hover"): the
// DeviceTable of a checked program on the device list in effect. For each fn,
// where it runs and, on the workers, the bytes it sends per call (its calls
// included); for each value (params and locals), its layout in the seed's
// words; for each line that sends anything, every collective on it and every
// call of a fn on the workers that sends something, in the seed's hover format.
//
// Counting (devices.md item 10): a figure is the payload handed to the
// collective, values × dtype size. The lowering of an operation across the
// batch axis sends: mean its result's values and a count, cross_entropy and
// mse a sum and a count (2 values), batch_norm 2·C + 1 values in f64, sum
// and reduce(with=sum) its result's values, each in the result's dtype
// (batch_norm: f64). value_and_grad (and grad) all-reduce the gradients of
// every param, one collective per dtype. A float collective inside a fn
// that value_and_grad differentiates counts twice (the backward pass runs
// one as big). A collective counts once per occurrence in a body: loops and
// branches are not unrolled.
//
// `shard params` (item 9): a model's layout is its pieces; a line that
// reads a param (`x @ m.w1`, or a builtin given a model, linear(m.l1, x))
// lists an all-gather of the param's pieces (piece length × N values
// padded, each device handing its piece), and "in the backward pass" a
// reduce-scatter of its gradient (the padded whole), counted when the
// line's fn is differentiated; value_and_grad all-reduces no gradient of
// a sharded param; norm and clip_norm of gradients all-reduce one f64.
// A program with a `mesh` (on any device list, `devices cpu` simulating its
// instances): nothing outside spmd fns communicates; an spmd fn's values
// are its blocks and each collective call lists the payload each instance
// hands it, and its transpose's in the backward pass (Note [Mesh figures]
// in explain_mesh.cpp).
//
// `split H` (item 9; explain_heads.cpp): a value typed with H is "split
// along H: each device holds 4 of H = 12"; batches are whole, so nothing
// is lowered and no gradient is all-reduced; each op lists what its plan
// sends (Note [Split heads] in heads_plan.cpp): an all-reduce where H is
// summed away (`@ m.w_o`: 4·D·b·n = 3,072·b·n bytes), an all-gather for an
// op that runs whole, and "in the backward pass" the all-reduce of a cut's
// cotangent, counted when the line's fn is differentiated.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diag/source.h"
#include "interp/check/checked.h"

namespace ss::check::comms {

/// A byte or value count: a number when the types give one, else a sum of
/// monomials in size variables (dims' values put in), as `4·n + 4`.
struct Size {
  /// Sorted size-variable names -> coefficient; the empty key is the
  /// constant term.
  std::map<std::vector<std::string>, int64_t> terms;

  static Size constant(int64_t n);
  bool known() const;     // no size variable in it
  int64_t value() const;  // the constant term (when known())
  bool zero() const;
  Size& operator+=(const Size& o);
  Size operator*(int64_t k) const;
  /// `203,264`, `4·n + 4`, `784·n`.
  std::string str() const;
};

/// `813,056 bytes (794 KiB)`; `16 bytes`; `4·n + 4 bytes`. KiB (bytes /
/// 1024 rounded to nearest) is shown from 1,024 bytes up.
std::string bytes_text(const Size& bytes);
/// `203,264`.
std::string thousands(int64_t n);

/// One collective that a line runs.
struct Collective {
  std::string op = "all-reduce";
  /// What it combines, as the seed words it: "the gradients of `Mlp`'s
  /// params `w1` and `w2`, which adds up every device's part of the batch".
  std::string what;
  std::string source;  // "value_and_grad", "cross_entropy", "mean", ...
  Size count;          // values handed to the collective
  std::string dtype;   // "f32"
  Size bytes;          // count × dtype size
  /// The item as the seed's list shows it, unwrapped: "all-reduce of ...:
  /// 203,264 × f32 = 813,056 bytes (794 KiB)".
  std::string text;
  /// It runs only in the backward pass (a reduce-scatter of a sharded
  /// param's gradient): its text says so, and the line's total, a forward
  /// call's, leaves it out.
  bool backward = false;
};

/// A call, on this line, of a fn on the workers whose body sends.
struct CallSend {
  std::string fn;
  /// Its bytes per call; doubled (its float part) when the call is
  /// differentiated by value_and_grad.
  Size bytes;
  bool differentiated = false;
  bool per_batch = false;  // mean_logs: once per batch
  std::string text;        // "inside `loss`: 16 bytes per call"
};

/// A line that sends anything.
struct LineSends {
  std::string file;
  uint32_t line = 0;
  std::string fn;      // the fn whose body holds the line
  std::string source;  // the line's text, trimmed
  std::vector<Collective> collectives;
  std::vector<CallSend> calls;
  Size total;
  /// Who sends: "the 3 devices", or a mesh program's "the 8 instances".
  std::string among;
  /// The seed's block, word for word ("Sent between the 3 devices on this
  /// line, per call:" ... "In all: 813,072 bytes (794 KiB).").
  std::string text;
};

/// A value's layout: a param or a local of a fn.
struct ValueLayout {
  std::string fn;
  std::string name;
  bool param = false;
  std::string type;  // as written: `[b D]`, `Mlp`
  enum class Kind {
    Split,
    Whole,
    ModelCopy,
    OptimCopy,
    ModelShards,  // `shard params`: model_bytes are one device's pieces
    OptimShards,
    Blocks,  // in an spmd fn: each instance's block (a mesh program)
    Controller,
    Anywhere,
    OneDevice
  };
  Kind kind = Kind::Whole;
  std::string axis;  // Split: the batch axis's name
  /// ModelCopy: params and buffers; ModelShards: one device's pieces.
  std::optional<int64_t> model_bytes;
  std::string text;  // "split across the 3 devices along b, ..."
  std::string file;
  uint32_t line = 0;  // 0 when unknown
  /// A fused attention's scores or probabilities (Note [The attention
  /// written out] in interp/check/fusion.cpp): "not computed: lines 50–52
  /// run as one scaled_dot_product_attention(q, k, v, causal=true)", a
  /// line of its own under the layout; empty otherwise.
  std::string fused;
};

struct FnEntry {
  std::string name;
  FnInfo::Placement placement = FnInfo::Placement::Anywhere;
  std::string placement_words;  // "on the workers"
  std::string reason;           // controller fns: why
  std::string file;
  uint32_t line = 0;
  std::string reason_at;  // "file:line" of the reason, when known
  /// On the workers: bytes sent per call, calls included.
  std::optional<Size> bytes_per_call;
  std::string text;  // "runs on the workers and sends 8 bytes per call"
};

struct DeviceTable {
  std::string devices;  // "cpu[0 1 2]"
  size_t count = 1;
  std::vector<std::string> options;  // "shard params", "split H"
  /// A program with a `mesh`: "mesh x=4 y=2: each spmd fn runs as 8
  /// instances, ..." (explain_mesh.cpp); empty without one.
  std::string mesh;
  /// `split H` on several devices: "H" (the report says "tensor parallel
  /// over H"); empty otherwise.
  std::string split_dim;
  /// Options and features this build doesn't lay out ("shard params: not
  /// in this build ...").
  std::vector<std::string> notes;
  /// The example batch size (the file's first `batches(n)`), if any.
  std::optional<int64_t> example_batch;
  std::vector<int64_t> example_split;  // 22/21/21
  /// Deterministic mode (Note [Deterministic mode] in
  /// interp/devices/lower/chunks.h): the example batch's chunk size.
  bool deterministic = false;
  std::optional<int64_t> chunk;
  /// Deterministic mode with `split H` (Note [Heads one at a time] in
  /// interp/devices/lower/heads.cpp): the dim whose heads run one at a
  /// time, on one device too; the batch is not cut then.
  std::string deterministic_heads;
  std::vector<FnEntry> fns;         // source order, user fns only
  std::vector<ValueLayout> values;  // by fn, params then locals
  std::vector<LineSends> lines;     // source order
};

/// The table of [prog] on its device list (Program::devices()).
DeviceTable build_table(const Program& prog, const diag::SourceMap& sm);

/// The seed's block for one line (wrapped as the hover shows it).
std::string render_line(const LineSends& l, size_t devices);
/// The whole report, as `ss explain` prints it.
std::string render_report(const DeviceTable& t);

}  // namespace ss::check::comms

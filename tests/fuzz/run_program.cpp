// The `run` target's generator (run_program.h).
#include "tests/fuzz/run_program.h"

#include <algorithm>
#include <iterator>
#include <string_view>
#include <vector>

#include "ops/registry/registry.h"

namespace ss::fuzz {

// Note [A runtime fuzzer's programs]
// Issue 32 asks for well-typed programs drawn from the builtins' table,
// each builtin given hostile values. An input is read as choices:
//
//   [NAME;] MODE OP OP (PARAM-CHOICES)*
//
// NAME; (optional) names the builtin as the table spells it, so that a
// corpus file keeps its meaning when builtins are added; otherwise two
// bytes index ops::all_ops(). MODE says what the program does with the
// call: prints it, runs it as a statement, formats it with an f-string's
// spec, or (no builtin) formats a value of the pools. Each parameter of
// the op's entry then takes one or two bytes: whether an optional one is
// given, and which value. The value comes from the pool the parameter's
// kind asks for (an axis, `over=`, a type), and for a value parameter
// mostly from the pool its name suggests (kHints: `dtype` a dtype, `n` an
// int, `xs` a list), else from any pool, so that most programs check and
// run but a few mix kinds the checker must refuse. The values are the
// hostile ones issue 32 lists: 0, -1, 2^31 - 1, 2^31, 2^53 + 1, 2^62,
// -2^63, NaN, +-inf, -0.0, 1e308, 5e-324, an empty axis (a runtime size
// of 0: the checker refuses a literal 0), sizes near 2^31 and 2^63, huge
// precisions and widths. The prelude names the tensors once, so a call
// stays one short line. It also declares a record, a model of the
// standard library's Linear, LayerNorm and BatchNorm, and a loss fn, and
// binds `net` and its optimizer `opt`: a parameter named
// as the runtime builtins name theirs (`f`, `m`, `model`, `l`, `bn`,
// `opt`, `mode`, `record`, `sink`) draws from the fn values (`loss`,
// `remat(loss)`, `autocast(loss, bf16)`), the models (a model's type for
// a type parameter: `init(Net)`), the optimizers, the modes, the records
// or the sinks, and three parameters other builtins name for a tensor
// take gradients or logs for one builtin only (kOpHints: update's `g`,
// set_params' `p`, write's `r`), so that value_and_grad, grad, linear,
// batch_norm, dropout, update, save, load and the others run; the
// convolutions' `x` and `k` take tensors of rank 3 or 4, attention's q, k
// and v matrices. The pattern ops
// (rearrange, split, einsum) take a pattern of their pool instead of
// parameters, with as many operands from the tensors as it has inputs:
// degenerate ones (a literal 1 squeezed or inserted, a 0-d side, a label twice,
// a literal k in an input, 5 split into 2, into 0 or into 2^31 parts). A choice
// of "any pool" picks among the first eight pools only, as before those were
// added, so that a corpus file keeps its values.

namespace {

const char* kPrelude =
    "dim B = 3\n"
    "dim C = 1\n"
    "dim D = 5\n"
    "\n"
    "data Row:\n"
    "    v: [D] in 0.0..=1.0\n"
    "    label: i64 in 0..B\n"
    "\n"
    "model Net:\n"
    "    l: Linear[D B]\n"
    "    n: LayerNorm[D]\n"
    "    bn: BatchNorm[B]\n"
    "\n"
    "fn loss(m: Net, v: [D]) -> f32:\n"
    "    return sum(linear(m.l, v))\n"
    "\n"
    "fn main():\n"
    "    let z = len(range(0))\n"
    "    let big = 2147483648\n"
    "    let e = to(arange(z), f32)\n"
    "    let x = to(arange(D), f32) - 2.0\n"
    "    let s = log(x)\n"
    "    let m = reshape(to(arange(B), f32), [C, B])\n"
    "    let w = reshape(to(arange(15), f32) / 7.0, [B, D])\n"
    "    let k = arange(D)\n"
    "    let u = to(arange(B), i32)\n"
    "    let h = to(x, bf16)\n"
    "    let g = to(x, f16)\n"
    "    let c = x > 0.0\n"
    "    let ez = full([z, B], 1.0)\n"
    "    let net = Net.init(seed=0)\n"
    "    let opt = sgd(net, 0.1)\n";

using Pool = std::vector<const char*>;

const Pool kTensors = {"x",
                       "e",
                       "s",
                       "m",
                       "w",
                       "k",
                       "u",
                       "h",
                       "g",
                       "c",
                       "ez",
                       "tensor([nan, inf, -inf, -0.0])",
                       "arange(big)",
                       "full([big], 0.5)",
                       "full([B, D], nan)",
                       "to(x, i64)",
                       "tensor([9007199254740993])"};
const Pool kInts = {"0",
                    "-1",
                    "1",
                    "2",
                    "3",
                    "7",
                    "z",
                    "big",
                    "2147483647",
                    "-2147483649",
                    "9007199254740993",
                    "4611686018427387904",
                    "-9223372036854775807 - 1",
                    "9223372036854775807"};
const Pool kFloats = {"0.0",
                      "-0.0",
                      "1.0",
                      "-1.5",
                      "0.5",
                      "nan",
                      "inf",
                      "-inf",
                      "1e308",
                      "5e-324",
                      "1.7976931348623157e308",
                      "9007199254740993.0"};
const Pool kBools = {"true", "false"};
const Pool kStrs = {"\"\"",
                    "\"tanh\"",
                    "\"mean\"",
                    "\"sum\"",
                    "\"none\"",
                    "\"relu\"",
                    "\"gelu\"",
                    "\"a\"",
                    "\"fuzz_out.bin\""};
const Pool kAxes = {"B", "C", "D", "n", "X"};
const Pool kOvers = {
    "B", "C", "D", "n", "(B, D)", "(C, B)", "0", "-1", "9223372036854775807"};
const Pool kShapes = {"[B, D]",
                      "[D]",
                      "[z, B]",
                      "[z]",
                      "[big]",
                      "[2147483647]",
                      "[2147483648, 2]",
                      "[9223372036854775807]",
                      "[4611686018427387904, 4]",
                      "[-1]",
                      "[1, 5]",
                      "[5, 1]",
                      "[D] f32",
                      "[B D] f32",
                      "[B D] bf16",
                      "[D] i64",
                      "f32"};
const Pool kDtypes = {"f32", "f16", "bf16", "f64", "i32", "i64", "bool", "u8"};
const Pool kLists = {"[x, x]",
                     "[m, m]",
                     "[k]",
                     "[]",
                     "[e, e]",
                     "[x, w]",
                     "[1.0, nan]",
                     "[0.9, 0.999]"};
const Pool kSpecs = {".3f",
                     ".1100f",
                     ".1101f",
                     ">1048576",
                     ">1048577",
                     ".0e",
                     "x",
                     "d",
                     "b",
                     "%",
                     ",.2f",
                     "020.10g",
                     ".2147483648f",
                     ".9223372036854775807f",
                     "e"};

// Patterns (rearrange, split, einsum: Note [A runtime fuzzer's
// programs]), with the degenerate ones: a literal 1 squeezed or inserted,
// a 0-d side, a group of one, a literal k in an input (E0306), a label
// twice, a split of 5 into 2 or into 0 parts, k = 2^31.
const Pool kRearranges = {
    "a -> a",           "a -> a 1",     "a -> 1 a 1",     "a b -> b a",
    "a b -> (a b)",     "a b -> (b a)", "a b -> b (a 1)", "a 1 -> a",
    "1 a -> a",         "(a b) -> a b", "(a D) -> a D",   "(D a) -> D a",
    "a b -> a",         "a -> a a",     "a -> (a)",       "(a 5) -> a",
    "a b -> (a b) 1 1", "a b -> b a 1", "a (b 1) -> b a", ".. a -> a .."};
const Pool kSplits = {"(5 a) -> a",
                      "(1 a) -> a",
                      "(a 5) -> a",
                      "b (5 d) -> b d",
                      "b (1 d) -> d b",
                      "(2 a) -> a",
                      "(0 a) -> a",
                      "(3 a) -> a",
                      "(5 a) -> a 1",
                      "a (d 5) -> a d",
                      "(2147483648 a) -> a",
                      "(B a) -> a",
                      "(a b) -> a"};
const Pool kEinsums = {"a, a ->",     "a, a -> a",       "a b, b c -> a c",
                       "a b, b -> a", "a, b -> a b",     "a b -> b a",
                       "a b -> a",    "a b ->",          "a ->",
                       "a a -> a",    "a b, a b -> a b", "a b, c b -> a c",
                       "a, -> a",     "a b, b, a -> a",  "a, b, c -> a b c",
                       "a b, b a ->", "a 1, 1 b -> a b", "a (b c), b c -> a",
                       "a, a -> a a", ".. d, .. d -> .."};

// The prelude's model, optimizer and fn, the modes, the data and the
// sinks: the values the table's runtime builtins take (models, fn values,
// datasets, sinks), for the parameters so named (kHints) only.
const Pool kModels = {
    "net", "net.l", "net.n", "net.bn", "copy(net)", "Net.init(seed=1)", "Net"};
const Pool kFns = {"loss", "remat(loss)", "autocast(loss, bf16)", "loss"};
const Pool kOptims = {"opt", "sgd(net, 0.1)", "adam(net)", "adamw(net, 1e308)"};
const Pool kModes = {"Train(seed=1)", "Eval", "Train(seed=-1)", "Train()"};
const Pool kRecords = {"Row"};
const Pool kSinks = {"stdout()", "csv(\"fuzz_out.csv\")", "tee()"};
const Pool kGradsPool = {
    "zeros_like(net)", "zeros_like(net) + 1e308", "zeros_like(net) / 0.0"};
const Pool kLogsPool = {"logs(a=1.0)", "logs(a=nan, b=x)", "logs()"};
// Operands of rank 3 and 4 for the convolutions, which the tensors (all
// of rank 0 to 2) never fit: empty, NaN and infinite ones among them.
const Pool kRank3 = {"reshape(w, [1, B, D])",
                     "reshape(x, [1, 1, D])",
                     "full([1, 1, 1], nan)",
                     "reshape(e, [z, 1, 1])",
                     "full([1, 1, 2], 0.5)"};
const Pool kRank4 = {"reshape(w, [1, 1, B, D])",
                     "full([1, 1, 2, 2], 0.5)",
                     "reshape(x, [1, 1, 1, D])",
                     "full([1, 1, 1, 1], inf)",
                     "reshape(e, [1, 1, z, 1])"};
// Attention's q, k and v ([*s n d], [*s t d], [*s t e]): matrices, an
// empty one, a NaN one.
const Pool kMatrices = {
    "w", "full([B, D], nan)", "reshape(w, [1, B, D])", "ez", "w * 1e30"};
const Pool kModelTypes = {"Net", "Linear[D B]", "Net f64", "Linear[D B] bf16"};

// The pools a value parameter may draw from, the first eight also when a
// choice takes any pool (kept at eight: a corpus file's choices keep
// their values); kHints names one by index.
const Pool* const kValuePools[] = {&kTensors,
                                   &kInts,
                                   &kFloats,
                                   &kBools,
                                   &kStrs,
                                   &kShapes,
                                   &kDtypes,
                                   &kLists,
                                   &kModels,
                                   &kFns,
                                   &kOptims,
                                   &kModes,
                                   &kRecords,
                                   &kSinks,
                                   &kGradsPool,
                                   &kLogsPool,
                                   &kRank3,
                                   &kRank4,
                                   &kMatrices};
constexpr size_t kAnyPools = 8;
enum Hint {
  kTensor,
  kInt,
  kFloat,
  kBool,
  kStr,
  kShape,
  kDtype,
  kList,
  kModel,
  kFn,
  kOptim,
  kMode,
  kRecord,
  kSink,
  kGrad,
  kLog,
  kRank3Tensor,
  kRank4Tensor,
  kMatrix
};

// A parameter's name, as the table spells it, says what it mostly is; a
// name absent here is a tensor. Names, not builtins: a new builtin whose
// parameters are named alike is fuzzed well without an entry.
struct NameHint {
  std::string_view name;
  Hint hint;
};
constexpr NameHint kHints[] = {
    {"n", kInt},
    {"classes", kInt},
    {"seed", kInt},
    {"step", kInt},
    {"total", kInt},
    {"step_size", kInt},
    {"ignore_index", kInt},
    {"growth_interval", kInt},
    {"total_iters", kInt},
    {"warmup", kInt},
    {"shift", kInt},
    {"to", kInt},
    {"v", kFloat},
    {"value", kFloat},
    {"p", kFloat},
    {"lr", kFloat},
    {"eps", kFloat},
    {"delta", kFloat},
    {"lo", kFloat},
    {"hi", kFloat},
    {"std", kFloat},
    {"mean", kFloat},
    {"gamma", kFloat},
    {"max", kFloat},
    {"scale", kFloat},
    {"frac", kFloat},
    {"seconds", kFloat},
    {"momentum", kFloat},
    {"weight_decay", kFloat},
    {"label_smoothing", kFloat},
    {"approximate", kStr},
    {"reduction", kStr},
    {"path", kStr},
    {"act", kStr},
    {"dir", kStr},
    {"keepdim", kBool},
    {"shuffle", kBool},
    {"drop_last", kBool},
    {"causal", kBool},
    {"affine", kBool},
    {"log_target", kBool},
    {"stream", kBool},
    {"tiled", kBool},
    {"amsgrad", kBool},
    {"type", kShape},
    {"sizes", kShape},
    {"dtype", kDtype},
    {"xs", kList},
    {"values", kList},
    {"betas", kList},
    {"perm", kList},
    // Names no builtin of the corpus reached with a tensor (a runtime
    // builtin's model, fn, optimizer, mode, record, sink).
    {"f", kFn},
    {"m", kModel},
    {"model", kModel},
    {"l", kModel},
    {"bn", kModel},
    {"opt", kOptim},
    {"mode", kMode},
    {"record", kRecord},
    {"sink", kSink},
};

// A parameter whose name other builtins use for a tensor (`g`, `p`, `r`):
// its hint for one builtin only, so that the corpus's files of the others
// keep their values (clip_norm(g, ...) takes a tensor too).
struct OpHint {
  std::string_view op, name;
  Hint hint;
};
constexpr OpHint kOpHints[] = {
    {"update", "g", kGrad},
    {"set_params", "p", kGrad},
    {"write", "r", kLog},
    {"scaled_dot_product_attention", "q", kMatrix},
    {"scaled_dot_product_attention", "k", kMatrix},
    {"scaled_dot_product_attention", "v", kMatrix},
    {"conv1d", "x", kRank3Tensor},
    {"conv1d", "k", kRank3Tensor},
    {"conv2d", "x", kRank4Tensor},
    {"conv2d", "k", kRank4Tensor},
    {"conv_transpose2d", "x", kRank4Tensor},
    {"conv_transpose2d", "k", kRank4Tensor},
};

Hint hint_of(std::string_view op, std::string_view name) {
  for (const OpHint& h : kOpHints)
    if (h.op == op && h.name == name) return h.hint;
  for (const NameHint& h : kHints)
    if (h.name == name) return h.hint;
  return kTensor;
}

// The input's bytes as choices; past the end every choice is 0.
struct Choices {
  const uint8_t* data;
  size_t size;
  size_t at = 0;
  uint8_t next() { return at < size ? data[at++] : 0; }
  const char* pick(const Pool& p) { return p[next() % p.size()]; }
};

// The builtin the input names (`sum;...`) or indexes; nullptr: format a
// value (MODE's last case), decided by the caller.
const ops::OpDef* choose_op(Choices& c) {
  static const std::vector<const ops::OpDef*> all = ops::all_ops();
  const auto* begin = reinterpret_cast<const char*>(c.data);
  std::string_view head(begin, std::min<size_t>(c.size, 40));
  if (size_t semi = head.find(';'); semi != head.npos)
    if (const ops::OpDef* op = ops::find_op(head.substr(0, semi))) {
      c.at = semi + 1;
      return op;
    }
  unsigned hi = c.next(), lo = c.next();
  return all[((hi << 8) | lo) % all.size()];
}

std::string value_for(std::string_view op,
                      const ops::ParamSpec& p,
                      Choices& c) {
  switch (p.kind) {
    case ops::ParamKind::Axis:
      return c.pick(kAxes);
    case ops::ParamKind::Axes:
      return c.pick(kOvers);
    case ops::ParamKind::TypeArg:
      // A model's type (`init(Net)`, `load(path, Net)`), else a tensor's.
      return c.pick(hint_of(op, p.name) == kModel ? kModelTypes : kShapes);
    case ops::ParamKind::Value:
      break;
  }
  // Three in four from the pool the name suggests, else from any pool.
  uint8_t b = c.next();
  const Pool* pool =
      b < 192 ? kValuePools[hint_of(op, p.name)] : kValuePools[b % kAnyPools];
  return c.pick(*pool);
}

// A pattern op's call: `einsum(x, w, a, a b -> b)`, its operands as many
// as the pattern's inputs, each from the tensors.
std::string pattern_call(const ops::OpDef& op, Choices& c) {
  const Pool& pool = op.intrinsic == ops::Intrinsic::Rearrange ? kRearranges
                     : op.intrinsic == ops::Intrinsic::Split   ? kSplits
                                                               : kEinsums;
  std::string_view pat = c.pick(pool);
  std::string_view lhs = pat.substr(0, pat.find("->"));
  size_t n = 1 + std::count(lhs.begin(), lhs.end(), ',');
  std::string s = std::string(op.name) + "(";
  for (size_t i = 0; i < n; ++i) s += std::string(c.pick(kTensors)) + ", ";
  return s + std::string(pat) + ")";
}

// `name(args)` for [op]: required parameters in order (an `over=` or a
// keyword-only one by name), each optional one given or not, a variadic
// op one or two more values.
std::string call_text(const ops::OpDef& op, Choices& c) {
  if (op.intrinsic != ops::Intrinsic::None) return pattern_call(op, c);
  std::vector<std::string> args;
  bool variadic_done = !op.variadic;
  auto more = [&] {
    for (int i = c.next() % 3; i > 0; --i) args.push_back(c.pick(kTensors));
    variadic_done = true;
  };
  for (const ops::ParamSpec& p : op.params) {
    if (p.keyword_only && !variadic_done) more();
    if (!p.required && c.next() % 2 == 0) continue;
    bool by_name =
        !p.required || p.keyword_only || p.kind == ops::ParamKind::Axes;
    std::string v = value_for(op.name, p, c);
    args.push_back(by_name ? std::string(p.name) + "=" + v : v);
  }
  if (!variadic_done) more();
  std::string s = std::string(op.name) + "(";
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + args[i];
  return s + ")";
}

// What MODE asks the program to do with [what]: print it, run it alone,
// or format it.
std::string statement(uint8_t mode, const std::string& what, Choices& c) {
  switch (mode % 4) {
    case 0:
    case 1:
      return "print(" + what + ")";
    case 2:
      return what;
    default:
      return std::string("print(f\"{") + what + ":" + c.pick(kSpecs) + "}\")";
  }
}

}  // namespace

std::string run_program_builtin(const uint8_t* data, size_t size) {
  Choices c{data, size};
  const ops::OpDef* op = choose_op(c);
  uint8_t mode = c.next();
  return mode % 8 == 7 ? "" : op->name;
}

std::string run_program_text(const uint8_t* data, size_t size) {
  Choices c{data, size};
  const ops::OpDef* op = choose_op(c);
  uint8_t mode = c.next();
  // One in eight formats a value of the pools instead of calling.
  std::string what = mode % 8 == 7
                         ? std::string(c.pick(*kValuePools[c.next() % 3]))
                         : call_text(*op, c);
  return std::string(kPrelude) + "    " + statement(mode, what, c) + "\n";
}

}  // namespace ss::fuzz

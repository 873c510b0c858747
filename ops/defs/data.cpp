// Data: dataset mnist synthetic_digits len batches progress (split and
// take on a Dataset are overloads in shape.cpp).

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;
using types::FieldInfo;

/// Param [i] as a record type argument.
const types::RecordInfo* record_arg(RuleCtx& ctx, size_t i) {
  Type t = ctx.type_arg(i);
  if (t.is_error()) return nullptr;
  if (t.kind != K::Record || !t.record) {
    ctx.error(Code::E0303,
              ctx.span(i),
              std::string(ctx.op_name()) +
                  " needs a record type (a `data` declaration), but " +
                  ctx.text(i) + " is " + t.str(),
              ctx.text(i));
    return nullptr;
  }
  return t.record;
}

Type dataset_of(const types::RecordInfo* r) {
  Type d = Type::of(K::Dataset);
  d.record = r;
  return d;
}

bool require_str(RuleCtx& ctx, size_t i) {
  return require_kind(ctx, i, K::Str, "a path, a str");
}

Type dataset_rule(RuleCtx& ctx) {
  const types::RecordInfo* r = record_arg(ctx, 0);
  if (ctx.type(1).is_error() || !r) return Type::error();
  if (!require_str(ctx, 1)) return Type::error();
  if (ctx.has(2) && !ctx.type(2).is_error() &&
      !require_kind(ctx, 2, K::Bool, "true or false"))
    return Type::error();
  // Renames (img="x"): each extra keyword names a field and is a str.
  for (auto& [name, t] : ctx.extra_keywords()) {
    if (t.is_error()) return Type::error();
    if (!r->field(name)) {
      ctx.error(
          Code::E0203,
          ctx.call_span(),
          "dataset renames " + name + ", which is not a field of " + r->name);
      return Type::error();
    }
    if (t.kind != K::Str) {
      ctx.error(Code::E0303,
                ctx.call_span(),
                "dataset's " + name +
                    "= names a tensor in the file, a str, "
                    "not " +
                    t.str());
      return Type::error();
    }
  }
  return dataset_of(r);
}

Type mnist_rule(RuleCtx& ctx) {
  const types::RecordInfo* r = record_arg(ctx, 0);
  if (ctx.type(1).is_error() || !r) return Type::error();
  if (!require_str(ctx, 1)) return Type::error();
  // Every image of an IDX file has the sizes its header declares, so a
  // field's size variable would bind to nothing a program can see; it
  // reached the loader as a size of -1 ("expected [-1 -1] (1 values)",
  // issue 32 item 11). A dataset read from npy binds one; here it is an
  // error where the field is written.
  for (const FieldInfo& f : r->fields)
    for (const types::Axis& a : f.type.shape)
      if (a.kind == types::Axis::Kind::Var) {
        ctx.error(Code::E0303,
                  ctx.span(0),
                  "mnist gives every image the sizes its file declares, "
                  "but " +
                      r->name + "'s field " + f.name + " is " + f.type.str() +
                      ", with the size variable " + a.str(),
                  ctx.text(0))
            .note(f.name + " is declared here", f.span)
            .help("write the images' sizes: [28 28] or [784] for MNIST");
        return Type::error();
      }
  return dataset_of(r);
}

// R must have one float field of 784 values whose domain holds [0, 1] and
// one i64 (0-d) field whose domain holds 0..10 (0 to 9).
Type synthetic_digits_rule(RuleCtx& ctx) {
  const types::RecordInfo* r = record_arg(ctx, 0);
  if (ctx.type(1).is_error() || !r) return Type::error();
  if (!require_kind(ctx, 1, K::Int, "a count, an int")) return Type::error();
  if (ctx.has(2) && !ctx.type(2).is_error() &&
      !require_kind(ctx, 2, K::Int, "an int seed"))
    return Type::error();
  const FieldInfo* img = nullptr;
  const FieldInfo* label = nullptr;
  auto bad = [&](const FieldInfo* f, const std::string& why) {
    auto& d = ctx.error(Code::E0303,
                        ctx.span(0),
                        "synthetic_digits needs " + r->name +
                            " to have one float field of 784 values in "
                            "0..=1 and one i64 field in 0..10, but " +
                            why,
                        ctx.text(0));
    if (f) d.note(f->name + " is declared here", f->span);
    return Type::error();
  };
  for (const FieldInfo& f : r->fields) {
    if (!f.type.is_tensor()) continue;
    if (types::is_float(f.type.dtype)) {
      if (img)
        return bad(&f,
                   "it has two float fields, " + img->name + " and " + f.name);
      img = &f;
    } else if (types::is_int(f.type.dtype)) {
      if (label)
        return bad(&f,
                   "it has two int fields, " + label->name + " and " + f.name);
      label = &f;
    }
  }
  if (!img) return bad(nullptr, "it has no float field");
  if (!label) return bad(nullptr, "it has no int field");
  auto n = static_numel(img->type.shape);
  if (!n || *n != 784) return bad(img, img->name + " is " + img->type.str());
  if (img->has_domain && img->domain_lo && img->domain_hi &&
      (*img->domain_lo > 0 || *img->domain_hi < 1 ||
       (*img->domain_hi == 1 && !img->domain_inclusive)))
    return bad(img, img->name + "'s domain does not hold 0..=1");
  if (label->type.dtype != DType::I64 || label->type.rank() != 0)
    return bad(label, label->name + " is " + label->type.str());
  if (label->has_domain && label->domain_lo && label->domain_hi) {
    double hi = *label->domain_hi + (label->domain_inclusive ? 1 : 0);
    if (*label->domain_lo > 0 || hi < 10)
      return bad(label, label->name + "'s domain does not hold 0..10");
  }
  return dataset_of(r);
}

Type len_rule(RuleCtx& ctx) {
  const Type& x = ctx.type(0);
  if (x.is_error()) return Type::error();
  switch (x.kind) {
    case K::Dataset:
    case K::List:
    case K::Tuple:
    case K::Batches:
    case K::Str:
      return Type::of(K::Int);
    case K::Tensor:
      if (x.rank() > 0) return Type::of(K::Int);
      break;
    default:
      break;
  }
  ctx.error(Code::E0303,
            ctx.span(0),
            "len needs a dataset, list, tuple, batches or a tensor with an "
            "axis, but " +
                ctx.text(0) + " is " + x.str(),
            describe(ctx, 0));
  return Type::error();
}

Type batches_rule(RuleCtx& ctx) {
  const Type& ds = ctx.type(0);
  if (any_error({&ds, &ctx.type(1)})) return Type::error();
  if (!require_kind(ctx, 0, K::Dataset, "a dataset") ||
      !require_kind(ctx, 1, K::Int, "a batch size, an int"))
    return Type::error();
  if (auto n = ctx.const_int(1); n && *n <= 0) {
    ctx.error(Code::E0303,
              ctx.span(1),
              "batches needs a positive batch size, not " + ctx.text(1),
              describe(ctx, 1));
    return Type::error();
  }
  if (ctx.has(2) && !ctx.type(2).is_error() &&
      !require_kind(ctx, 2, K::Int, "an int seed"))
    return Type::error();
  if (ctx.has(3) && !ctx.type(3).is_error() &&
      !require_kind(ctx, 3, K::Bool, "true or false"))
    return Type::error();
  if (ctx.has(4) && !ctx.type(4).is_error() &&
      !require_kind(ctx, 4, K::Int, "a thread count, an int"))
    return Type::error();
  Type b = Type::of(K::Batches);
  b.record = ds.record;
  return b;
}

Type progress_rule(RuleCtx& ctx) {
  const Type& it = ctx.type(0);
  if (it.is_error()) return Type::error();
  switch (it.kind) {
    case K::Dataset:
    case K::List:
    case K::Batches:
      return it;
    case K::Model:
      if (!it.stack.empty()) return it;
      break;
    case K::Tensor:
      if (it.rank() > 0) return it;
      break;
    default:
      break;
  }
  ctx.error(Code::E0303,
            ctx.span(0),
            "progress wraps something a for loop iterates, but " + ctx.text(0) +
                " is " + it.str(),
            describe(ctx, 0));
  return Type::error();
}

OpDef def(const char* name,
          std::vector<ParamSpec> params,
          ShapeRule rule,
          const char* summary,
          DeviceRule device = host()) {
  OpDef d{name, std::move(params), rule, summary};
  d.differentiable = false;
  d.device = device;
  return d;
}

// batches and progress pass split data on: no E1901.
DeviceRule passes_on(DeviceRule r) {
  r.takes_split = true;
  return r;
}

}  // namespace

std::vector<OpDef> ops_data() {
  constexpr ParamKind V = ParamKind::Value;
  constexpr ParamKind T = ParamKind::TypeArg;
  OpDef ds =
      def("dataset",
          {{"record", T}, {"path"}, {"stream", V, false}},
          dataset_rule,
          "a Dataset[R] from safetensors, npz, a .npy dir or csv",
          host(HostEffect::MakesDataset))
          .with_torch(
              "torch.utils.data.TensorDataset(*tensors) of a loaded file");
  ds.any_keywords = true;  // field renames: img="x"
  return {
      ds,
      def("mnist",
          {{"record", T}, {"dir"}},
          mnist_rule,
          "a Dataset[R] from MNIST's IDX files in dir",
          host(HostEffect::MakesDataset))
          .with_torch("torchvision.datasets.MNIST(dir)"),
      def("synthetic_digits",
          {{"record", T}, {"n"}, {"seed", V, false}},
          synthetic_digits_rule,
          "n drawn digit images (28x28 in [0, 1]) with labels, in memory",
          host(HostEffect::MakesDataset))
          .with_torch("none: ShapeScript's own generator, so the README "
                      "example needs no download"),
      def("len",
          {{"x"}},
          len_rule,
          "the number of items of a dataset, list, tuple or batches",
          [] {
            DeviceRule r = host();
            r.across = Across::SizeOf;  // len(x) of a batch: E1802
            return r;
          }())
          .with_torch("len(x)"),
      def("batches",
          {{"ds"},
           {"n"},
           {"shuffle", V, false},
           {"drop_last", V, false},
           {"loader_threads", V, false}},
          batches_rule,
          "batches of n records, [b] R, shuffled by a seed",
          [] {
            DeviceRule r = passes_on(host());
            r.batch_size_param = 1;  // n: explain's example split
            return r;
          }())
          .with_torch("torch.utils.data.DataLoader(ds, batch_size=n, "
                      "shuffle=True, drop_last=)"),
      def("progress",
          {{"it"}},
          progress_rule,
          "the iterable, with a progress bar on stderr",
          passes_on(host(HostEffect::ShowsProgress)))
          .with_torch("none in torch: tqdm(it)"),
  };
}

}  // namespace ss::ops

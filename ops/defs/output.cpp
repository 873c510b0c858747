// Output: logs, sinks (stdout csv jsonl tee), write, mean_logs, print.

#include "ops/registry/op_def.h"
#include "ops/registry/rule_helpers.h"

namespace ss::ops {
namespace {

using K = Type::Kind;
using diag::Code;

Type logs_rule(RuleCtx& ctx) {
  Type r = Type::of(K::Logs);
  bool ok = true;
  for (auto& [name, t] : ctx.extra_keywords()) {
    if (t.is_error()) {
      ok = false;
      continue;
    }
    if (!t.is_numeric()) {
      ctx.error(
          Code::E0303,
          ctx.call_span(),
          "logs holds numbers and tensors, but " + name + " is " + t.str());
      ok = false;
      continue;
    }
    r.fields.emplace_back(name, t);
  }
  if (ctx.extra_count() > 0) {
    ctx.error(Code::E0305,
              ctx.extra_span(0),
              "logs takes named values only: logs(loss=l, acc=a)");
    ok = false;
  }
  return ok ? r : Type::error();
}

Type sink_rule(RuleCtx& ctx) {
  // csv(path), jsonl(path): a str; stdout(): nothing.
  if (ctx.has(0)) {
    if (ctx.type(0).is_error()) return Type::error();
    if (!require_kind(ctx, 0, K::Str, "a path, a str")) return Type::error();
  }
  return Type::of(K::Sink);
}

Type tee_rule(RuleCtx& ctx) {
  bool ok = true;
  for (size_t k = 0; k < ctx.extra_count(); ++k) {
    const Type& t = ctx.extra_type(k);
    if (t.is_error()) {
      ok = false;
    } else if (t.kind != K::Sink) {
      ctx.error(Code::E0303,
                ctx.extra_span(k),
                "tee joins sinks, but argument " + std::to_string(k + 1) +
                    " is " + t.str());
      ok = false;
    }
  }
  return ok ? Type::of(K::Sink) : Type::error();
}

Type write_rule(RuleCtx& ctx) {
  if (any_error({&ctx.type(0), &ctx.type(1)})) return Type::error();
  if (!require_kind(ctx, 0, K::Sink, "a sink") ||
      !require_kind(ctx, 1, K::Logs, "logs(...)"))
    return Type::error();
  if (ctx.has(2) && !ctx.type(2).is_error() &&
      !require_kind(ctx, 2, K::Int, "an int step"))
    return Type::error();
  return Type::of(K::Unit);
}

Type mean_logs_rule(RuleCtx& ctx) {
  const Type& f = ctx.type(0);
  const Type& m = ctx.type(1);
  const Type& bs = ctx.type(2);
  if (any_error({&f, &m, &bs})) return Type::error();
  if (!require_kind(ctx, 0, K::Fn, "a function") ||
      !require_kind(ctx, 2, K::Batches, "batches (ds.batches(n))"))
    return Type::error();
  Type batch = Type::of(K::Batch);
  batch.record = bs.record;
  batch.shape = {ctx.fresh("b")};
  Type r = ctx.call_fn(f, {m, batch}, ctx.call_span());
  if (r.is_error()) return Type::error();
  if (r.kind != K::Logs) {
    ctx.error(Code::E0303,
              ctx.span(0),
              "mean_logs needs a function returning Logs, but " +
                  (f.fn_name.empty() ? ctx.text(0) : f.fn_name) + " returns " +
                  r.str(),
              ctx.text(0) + ": " + r.str());
    return Type::error();
  }
  return r;
}

Type print_rule(RuleCtx&) {
  return Type::of(K::Unit);
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

}  // namespace

std::vector<OpDef> ops_output() {
  OpDef logs =
      def("logs",
          {},
          logs_rule,
          "named values (0-d or tensors) for sinks and progress",
          per_example())
          .with_torch(
              "none: a dict {\"loss\": l.item()}, as written to a logger");
  logs.any_keywords = true;
  OpDef tee = def("tee",
                  {},
                  tee_rule,
                  "a sink writing to every sink given",
                  host(HostEffect::MakesSink))
                  .with_torch("none: writing to each logger");
  tee.variadic = true;
  OpDef print = def("print",
                    {},
                    print_rule,
                    "writes values to stdout; tensors with their type",
                    host(HostEffect::Prints))
                    .with_torch("print(x)");
  print.variadic = true;
  print.any_keywords = true;
  return {
      logs,
      def("stdout",
          {},
          sink_rule,
          "a sink printing one aligned line a write",
          host(HostEffect::MakesSink))
          .with_torch("none: print(...) each step"),
      def("csv",
          {{"path"}},
          sink_rule,
          "a sink writing a csv file: step,<names...> then a row a write",
          host(HostEffect::MakesFileSink))
          .with_torch("none: csv.writer(open(path, \"w\"))"),
      def("jsonl",
          {{"path"}},
          sink_rule,
          "a sink writing one JSON object a line",
          host(HostEffect::MakesFileSink))
          .with_torch("none: a file of json.dumps(...) lines"),
      tee,
      def("write",
          {{"sink"}, {"r"}, {"step", ParamKind::Value, false}},
          write_rule,
          "writes logs to a sink (step defaults to a counter)",
          host(HostEffect::WritesSink))
          .with_torch("none: logger.log(values, step=)"),
      def("mean_logs",
          {{"f"}, {"m"}, {"batches"}},
          mean_logs_rule,
          "f(m, batch) averaged over batches, weighted by example count",
          [] {
            // It calls f(m, batch) on the workers for each batch, and
            // passes the split batches on (no E1901).
            DeviceRule r = host(HostEffect::LoopsOverDataset);
            r.takes_split = true;
            r.fn_arg = FnArg::PerBatch;
            return r;
          }())
          .with_torch(
              "none: a loop under torch.no_grad() averaging by batch size"),
      print,
  };
}

}  // namespace ss::ops

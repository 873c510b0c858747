// The builtins' shape rules, driven through a fake RuleCtx: arguments are
// given as types, over= as axis names, errors are collected.

#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "ops/registry/registry.h"
#include "ops/registry/rule_helpers.h"
#include "ops/tests/fake_rule_ctx.h"

namespace {

using namespace ss;
using namespace ss::ops;
using ss::ops::testing::FakeCtx;
using types::Axis;
using types::DType;
using types::Type;
using K = Type::Kind;

Axis D = Axis::dim("D", 784);
Axis Hd = Axis::dim("Hd", 256);
Axis C = Axis::dim("C", 10);
Axis b = Axis::variable(1, "b");
Axis n = Axis::variable(2, "n");

Type T(std::vector<Axis> s, DType d = DType::F32) {
  return Type::tensor(std::move(s), d);
}

types::FieldInfo field(std::string name, Type t) {
  types::FieldInfo f;
  f.name = std::move(name);
  f.type = std::move(t);
  return f;
}

Type bin(const char* op, Type a, Type b2) {
  FakeCtx c(op);
  c.arg(a, "x").arg(b2, "y");
  Type r = c.run();
  REQUIRE(c.errors.empty());
  return r;
}

}  // namespace

TEST_CASE("registry: families, lookup, unique names", "[ops]") {
  std::vector<std::pair<const char*, std::vector<OpDef>>> fams = {
#define SS_OP_FAMILY(f) {#f, ops_##f()},
#include "ops/registry/families.def"
#undef SS_OP_FAMILY
  };
  CHECK(fams.size() == 20);
  std::set<std::string> names;
  size_t total = 0;
  for (auto& [fam, defs] : fams) {
    INFO(fam);
    CHECK(!defs.empty());
    for (const OpDef& d : defs) {
      INFO(d.name);
      CHECK(names.insert(d.name).second);
      CHECK(std::string(d.summary).size() > 0);
      // Only the pattern ops are typed by the checker alone.
      if (!d.rule) CHECK(d.intrinsic != Intrinsic::None);
      ++total;
    }
  }
  CHECK(all_ops().size() == total);
  const OpDef* mm = find_op("matmul");
  REQUIRE(mm);
  CHECK(std::string(mm->name) == "matmul");
  CHECK(find_op("no_such_op") == nullptr);
  CHECK(find_op("split")->intrinsic == Intrinsic::Split);
  CHECK(find_op("split")->rule != nullptr);
  CHECK(find_op("einsum")->intrinsic == Intrinsic::Einsum);
  CHECK(find_op("rearrange")->intrinsic == Intrinsic::Rearrange);
  CHECK(find_op("sum")->device.kind == DeviceRule::Kind::Lowered);
  CHECK(find_op("max")->device.kind == DeviceRule::Kind::Refused);
  CHECK(find_op("softmax")->device.kind == DeviceRule::Kind::Refused);
  CHECK(find_op("print")->device.kind == DeviceRule::Kind::Host);
  CHECK(!find_op("argmax")->differentiable);
  CHECK(!find_op("eq")->differentiable);
  CHECK(find_op("update")->params[0].mutates);
  CHECK(find_op("batch_norm")->params[1].mutates);
}

TEST_CASE("dtype promotion follows torch.result_type", "[ops]") {
  auto dt = [](Type a, Type b2, Arith ar = Arith::Plain) {
    return result_dtype(a, b2, ar);
  };
  CHECK(dt(T({b}, DType::I32), T({b}, DType::I64)).dtype == DType::I64);
  CHECK(dt(T({b}, DType::BF16), T({b})).dtype == DType::F32);
  CHECK(dt(T({b}, DType::F16), T({b}, DType::BF16)).dtype == DType::F32);
  CHECK(dt(T({b}), T({b}, DType::F64)).dtype == DType::F64);
  CHECK(dt(T({b}, DType::I64), Type::of(K::Float)).dtype == DType::F32);
  CHECK(dt(T({b}, DType::BF16), Type::of(K::Float)).dtype == DType::BF16);
  CHECK(dt(T({b}, DType::I32), Type::of(K::Int)).dtype == DType::I32);
  CHECK(dt(T({b}, DType::Bool), Type::of(K::Int)).dtype == DType::I64);
  // A 0-d tensor of a higher category wins with its dtype; of the same
  // category the dimensioned tensor's dtype wins.
  CHECK(dt(T({b}, DType::I32), T({}, DType::F64)).dtype == DType::F64);
  CHECK(dt(T({b}, DType::BF16), T({}, DType::F32)).dtype == DType::BF16);
  CHECK(dt(T({b}, DType::I64), T({b}, DType::I64), Arith::TrueDiv).dtype ==
        DType::F32);
  CHECK(dt(Type::of(K::Int), Type::of(K::Int)).kind == K::Int);
  CHECK(dt(Type::of(K::Int), Type::of(K::Float)).kind == K::Float);
  CHECK(dt(Type::of(K::Int), Type::of(K::Int), Arith::TrueDiv).kind ==
        K::Float);
}

TEST_CASE("elementwise: broadcasting and dtypes", "[ops]") {
  Type r = bin("add", T({b, Hd}), T({Hd}));
  CHECK(r.shape == std::vector<Axis>{b, Hd});
  r = bin("mul", T({b, Axis::lit(1)}), T({n}));
  CHECK(r.shape == std::vector<Axis>{b, n});
  CHECK(bin("mul", T({b}, DType::I64), Type::of(K::Float)).dtype == DType::F32);
  CHECK(bin("div", T({b}, DType::I64), T({b}, DType::I32)).dtype == DType::F32);
  CHECK(bin("add", T({b}, DType::Bool), T({b}, DType::Bool)).dtype ==
        DType::I64);
  CHECK(bin("lt", T({b, C}), Type::of(K::Float)).dtype == DType::Bool);
  CHECK(bin("eq", Type::of(K::Int), Type::of(K::Int)).kind == K::Bool);
  CHECK(bin("mul", Type::of(K::Int), Type::of(K::Int)).kind == K::Int);
  CHECK(bin("div", Type::of(K::Int), Type::of(K::Int)).kind == K::Float);
  CHECK(bin("add", Type::of(K::Float), Type::of(K::Int)).kind == K::Float);

  FakeCtx c("add");
  c.arg(T({b, Hd}), "h").arg(T({D}), "x");
  CHECK(c.run().is_error());
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].code == diag::Code::E0301);
  CHECK(c.errors[0].message ==
        "cannot broadcast [b Hd] with [D]: Hd (256) vs D (784)");
  CHECK(c.errors[0].label == "h: [b Hd], x: [D]");

  // An error argument gives an error, silently.
  FakeCtx e("add");
  e.arg(Type::error()).arg(T({D}));
  CHECK(e.run().is_error());
  CHECK(e.errors.empty());
}

TEST_CASE("elementwise: unary ops and host math", "[ops]") {
  auto un = [](const char* op, Type x) {
    FakeCtx c(op);
    c.arg(x, "x");
    Type r = c.run();
    REQUIRE(c.errors.empty());
    return r;
  };
  CHECK(un("sqrt", Type::of(K::Float)).kind == K::Float);
  CHECK(un("sqrt", Type::of(K::Int)).kind == K::Float);  // sqrt(D)
  CHECK(un("neg", Type::of(K::Int)).kind == K::Int);
  CHECK(un("exp", T({b}, DType::I64)).dtype == DType::F32);
  CHECK(un("relu", T({b}, DType::I32)).dtype == DType::I32);
  CHECK(un("tanh", T({b, D}, DType::BF16)).dtype == DType::BF16);
  CHECK(un("isnan", T({b, D})).dtype == DType::Bool);
  CHECK(un("relu", T({b, D})).shape == std::vector<Axis>{b, D});
}

TEST_CASE("elementwise: where and masked_fill", "[ops]") {
  Axis t = Axis::variable(3, "t");
  FakeCtx c("masked_fill");
  c.arg(T({b, n, t}), "s")
      .arg(T({n, t}, DType::Bool), "mask")
      .arg(Type::of(K::Float));
  Type r = c.run();
  CHECK(c.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b, n, t});

  FakeCtx w("where");
  w.arg(T({b, C}, DType::Bool)).arg(T({b, C})).arg(Type::of(K::Float));
  r = w.run();
  CHECK(w.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b, C});
  CHECK(r.dtype == DType::F32);

  FakeCtx bad("where");
  bad.arg(T({b, C})).arg(T({b, C})).arg(T({b, C}));
  CHECK(bad.run().is_error());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].code == diag::Code::E0304);
}

TEST_CASE("matmul", "[ops]") {
  Type r = bin("matmul", T({b, D}), T({D, Hd}));
  CHECK(r.shape == std::vector<Axis>{b, Hd});
  r = bin("matmul", T({D}), T({D, Hd}));
  CHECK(r.shape == std::vector<Axis>{Hd});
  r = bin("matmul", T({b, n, D}), T({D}));
  CHECK(r.shape == std::vector<Axis>{b, n});
  r = bin("matmul", T({b, n, D}), T({b, D, Hd}));
  CHECK(r.shape == std::vector<Axis>{b, n, Hd});
  r = bin("matmul", T({b, n, D}), T({D, C}));
  CHECK(r.shape == std::vector<Axis>{b, n, C});
  CHECK(bin("matmul", T({b, D}, DType::I64), T({D, C}, DType::I64)).dtype ==
        DType::I64);
  CHECK(bin("matmul", T({b, D}, DType::BF16), T({D, C})).dtype == DType::F32);

  FakeCtx c("matmul");
  c.arg(T({b, D}), "x").arg(T({Hd, C}), "m.w2");
  CHECK(c.run().is_error());
  REQUIRE(c.errors.size() == 1);
  CHECK(c.errors[0].code == diag::Code::E0302);
  CHECK(c.errors[0].message == "matmul contracts D (784) with Hd (256)");
  CHECK(c.errors[0].label == "x: [b D], m.w2: [Hd C]");

  FakeCtx z("matmul");
  z.arg(T({}), "s").arg(T({D, C}), "w");
  CHECK(z.run().is_error());
  REQUIRE(z.errors.size() == 1);
  CHECK(z.errors[0].code == diag::Code::E0302);

  // A dim and a literal of the same size are not equal.
  FakeCtx lit("matmul");
  lit.arg(T({b, Axis::lit(784)}), "x").arg(T({D, C}), "w");
  CHECK(lit.run().is_error());
  CHECK(lit.errors.size() == 1);
}

TEST_CASE("reductions", "[ops]") {
  FakeCtx s("sum");
  s.arg(T({b, C})).over({"C"});
  Type r = s.run();
  CHECK(s.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b});

  FakeCtx all("sum");
  all.arg(T({b, C}, DType::Bool));
  r = all.run();
  CHECK(r.shape.empty());
  CHECK(r.dtype == DType::I64);

  FakeCtx m("mean");
  m.arg(T({b}, DType::Bool));
  r = m.run();
  CHECK(r.dtype == DType::F32);
  CHECK(r.rank() == 0);

  FakeCtx am("argmax");
  am.arg(T({b, C})).over({"C"});
  r = am.run();
  CHECK(r.dtype == DType::I64);
  CHECK(r.shape == std::vector<Axis>{b});

  FakeCtx two("sum");
  two.arg(T({b, n, D})).over({"n", "D"});
  r = two.run();
  CHECK(r.shape == std::vector<Axis>{b});

  FakeCtx bad("sum");
  bad.arg(T({b, C})).over({"D"});
  CHECK(bad.run().is_error());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].code == diag::Code::E0308);

  FakeCtx any("any");
  any.arg(T({b, C}, DType::Bool)).over({"C"});
  CHECK(any.run().dtype == DType::Bool);

  FakeCtx hostmax("max");
  hostmax.arg(Type::of(K::Int)).arg(Type::of(K::Float));
  CHECK(hostmax.run().kind == K::Float);

  types::ModelInfo mlp;
  mlp.name = "Mlp";
  Type g = Type::of(K::Grads);
  g.model = &mlp;
  FakeCtx gn("norm");
  gn.arg(g, "g");
  r = gn.run();
  CHECK(gn.errors.empty());
  CHECK(r.is_tensor());
  CHECK(r.rank() == 0);

  FakeCtx red("reduce");
  Type fmax = Type::of(K::Fn);
  fmax.fn_name = "max";
  red.arg(T({b, C}, DType::I32)).over({"C"}).kw("with", fmax, "max");
  r = red.run();
  CHECK(red.errors.empty());
  CHECK(r.dtype == DType::I32);
  CHECK(r.shape == std::vector<Axis>{b});
}

TEST_CASE("along an axis", "[ops]") {
  FakeCtx sm("softmax");
  sm.arg(T({b, n, C})).over({"C"});
  Type r = sm.run();
  CHECK(sm.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b, n, C});

  FakeCtx tk("topk");
  tk.arg(T({b, C})).arg(Type::of(K::Int), "3").int_const("k", 3).over({"C"});
  r = tk.run();
  CHECK(tk.errors.empty());
  REQUIRE(r.kind == K::Tuple);
  REQUIRE(r.elems.size() == 2);
  CHECK(r.elems[0].shape == std::vector<Axis>{b, Axis::lit(3)});
  CHECK(r.elems[1].dtype == DType::I64);

  FakeCtx tv("topk");
  tv.arg(T({b, C})).arg(Type::of(K::Int), "k").over({"C"});
  r = tv.run();
  CHECK(r.elems[0].shape[1].kind == Axis::Kind::Var);

  FakeCtx so("sort");
  so.arg(T({b, C})).over({"C"});
  r = so.run();
  CHECK(r.elems[0].shape == std::vector<Axis>{b, C});
  CHECK(r.elems[1].dtype == DType::I64);

  FakeCtx ga("gather");
  ga.arg(T({b, C})).arg(T({b, Axis::lit(1)}, DType::I64)).over({"C"});
  r = ga.run();
  CHECK(ga.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b, Axis::lit(1)});
  CHECK(r.dtype == DType::F32);
}

TEST_CASE("shape ops", "[ops]") {
  FakeCtx cc("concat");
  cc.arg(Type::tuple({T({b, D}), T({b, D})}), "xs").over({"D"});
  Type r = cc.run();
  CHECK(cc.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b, Axis::lit(1568)});

  FakeCtx cv("concat");
  cv.arg(Type::tuple({T({b, D}), T({n, D})}), "xs").over({"b"});
  r = cv.run();
  CHECK(cv.errors.empty());
  CHECK(r.shape[0].kind == Axis::Kind::Var);

  FakeCtx tk("take");
  tk.arg(T({b, n, D})).arg(Type::of(K::Int)).over({"n"});
  r = tk.run();
  CHECK(r.shape == std::vector<Axis>{b, D});
  FakeCtx ti("take");
  ti.arg(T({Axis::dim("V", 100), D})).arg(T({b, n}, DType::I64)).over({"V"});
  r = ti.run();
  CHECK(r.shape == std::vector<Axis>{b, n, D});

  FakeCtx rs("reshape");
  rs.arg(T({b, D})).type_arg("sizes", T({b, Axis::lit(28), Axis::lit(28)}));
  r = rs.run();
  CHECK(rs.errors.empty());
  CHECK(r.rank() == 3);
  FakeCtx rb("reshape");
  rb.arg(T({C, D})).type_arg("sizes", T({Axis::lit(3)}));
  CHECK(rb.run().is_error());
  CHECK(rb.errors.size() == 1);

  FakeCtx to("to");
  to.arg(T({b, D})).type_arg("dtype", Type::scalar(DType::BF16));
  r = to.run();
  CHECK(r.dtype == DType::BF16);
  CHECK(r.shape == std::vector<Axis>{b, D});

  FakeCtx sz("size");
  sz.arg(T({b, D})).axis_arg("axis", D);
  CHECK(sz.run().kind == K::Int);
  FakeCtx sb("size");
  sb.arg(T({b, D})).axis_arg("axis", C);
  CHECK(sb.run().is_error());
  CHECK(sb.errors[0].code == diag::Code::E0308);

  types::RecordInfo digit;
  digit.name = "Digit";
  Type ds = Type::of(K::Dataset);
  ds.record = &digit;
  FakeCtx sp("split");
  sp.arg(ds, "data").arg(Type::of(K::Float), "0.9");
  r = sp.run();
  CHECK(sp.errors.empty());
  REQUIRE(r.kind == K::Tuple);
  CHECK(r.elems[0].kind == K::Dataset);
  FakeCtx sx("split");
  sx.arg(T({b}), "x").arg(Type::of(K::Float));
  CHECK(sx.run().is_error());
  CHECK(sx.errors[0].code == diag::Code::E0303);
}

TEST_CASE("make", "[ops]") {
  FakeCtx z("zeros");
  CHECK(z.run().kind == K::Init);
  FakeCtx zt("zeros");
  zt.type_arg("type", T({b, D}, DType::F64));
  CHECK(zt.run().dtype == DType::F64);
  FakeCtx cz("causal");
  cz.axis_arg("n", n).axis_arg("m", Axis::variable(3, "t"));
  Type r = cz.run();
  CHECK(r.dtype == DType::Bool);
  CHECK(r.rank() == 2);
  FakeCtx tn("tensor");
  tn.arg(Type::list(Type::list(Type::of(K::Int))))
      .list_lengths("values", {2, 3});
  r = tn.run();
  CHECK(r.shape == std::vector<Axis>{Axis::lit(2), Axis::lit(3)});
  CHECK(r.dtype == DType::I64);
  FakeCtx ar("arange");
  ar.arg(Type::of(K::Int), "10").int_const("n", 10);
  CHECK(ar.run().shape == std::vector<Axis>{Axis::lit(10)});
}

TEST_CASE("nn", "[ops]") {
  FakeCtx ce("cross_entropy");
  ce.arg(T({b, C}), "logits").arg(T({b}, DType::I64), "batch.label");
  Type r = ce.run();
  CHECK(ce.errors.empty());
  CHECK(r.is_tensor());
  CHECK(r.rank() == 0);
  CHECK(r.dtype == DType::F32);

  FakeCtx cs("cross_entropy");
  cs.arg(T({b, n, C})).arg(T({b, n}, DType::I64));
  CHECK(!cs.run().is_error());

  FakeCtx bad("cross_entropy");
  bad.arg(T({b, C}), "logits").arg(T({b, n}, DType::I64), "y");
  CHECK(bad.run().is_error());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].code == diag::Code::E0303);

  FakeCtx bf("cross_entropy");
  bf.arg(T({b, C}), "logits").arg(T({b}), "y");
  CHECK(bf.run().is_error());
  CHECK(bf.errors[0].code == diag::Code::E0304);

  FakeCtx em("embedding");
  em.arg(T({Axis::dim("V", 100), D})).arg(T({b, n}, DType::I64));
  CHECK(em.run().shape == std::vector<Axis>{b, n, D});

  FakeCtx cv("conv2d");
  cv.arg(T({b, Axis::lit(1), Axis::lit(28), Axis::lit(28)}))
      .arg(T({Axis::lit(8), Axis::lit(1), Axis::lit(3), Axis::lit(3)}));
  r = cv.run();
  CHECK(cv.errors.empty());
  CHECK(r.shape ==
        std::vector<Axis>{b, Axis::lit(8), Axis::lit(26), Axis::lit(26)});

  // linear(l, x) with l: Linear[D Hd].
  types::ModelInfo lin;
  lin.name = "Linear";
  lin.dim_params = {"I", "O"};
  lin.fields.push_back(field("w", T({Axis::dim("I", -1), Axis::dim("O", -1)})));
  lin.fields.push_back(field("b", T({Axis::dim("O", -1)})));
  Type l = Type::of(K::Model);
  l.model = &lin;
  l.model_args = {D, Hd};
  FakeCtx li("linear");
  li.arg(l, "m.l1").arg(T({b, D}), "x");
  r = li.run();
  CHECK(li.errors.empty());
  CHECK(r.shape == std::vector<Axis>{b, Hd});
  FakeCtx lb("linear");
  lb.arg(l, "m.l1").arg(T({b, Hd}), "x");
  CHECK(lb.run().is_error());
  CHECK(lb.errors[0].code == diag::Code::E0302);
}

TEST_CASE("autodiff and optimizers", "[ops]") {
  types::ModelInfo mlp;
  mlp.name = "Mlp";
  Type m = Type::of(K::Model);
  m.model = &mlp;
  Type loss = Type::of(K::Fn);
  loss.fn_name = "loss";
  types::RecordInfo digit;
  digit.name = "Digit";
  Type batch = Type::of(K::Batch);
  batch.record = &digit;
  batch.shape = {b};

  FakeCtx vg("value_and_grad");
  vg.arg(loss, "loss").arg(m, "m").arg(batch, "batch");
  vg.fn([](const std::vector<Type>&) { return Type::scalar(DType::F32); });
  Type r = vg.run();
  CHECK(vg.errors.empty());
  REQUIRE(vg.calls.size() == 1);
  CHECK(vg.calls[0].size() == 2);
  REQUIRE(r.kind == K::Tuple);
  CHECK(r.elems[0].is_tensor());
  CHECK(r.elems[1].kind == K::Grads);
  CHECK(r.elems[1].model == &mlp);

  FakeCtx bad("value_and_grad");
  bad.arg(loss, "loss").arg(m, "m").arg(batch, "batch");
  bad.fn([](const std::vector<Type>&) { return T({b}); });
  CHECK(bad.run().is_error());
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].code == diag::Code::E0309);
  CHECK(bad.errors[0].message ==
        "value_and_grad needs a function returning a 0-d float, but loss "
        "returns [b]");

  FakeCtx ax("value_and_grad");
  ax.arg(loss, "loss").arg(m, "m").bool_const("aux", true);
  ax.fn([](const std::vector<Type>&) {
    return Type::tuple({Type::scalar(DType::F32), T({b, C})});
  });
  r = ax.run();
  CHECK(ax.errors.empty());
  REQUIRE(r.elems.size() == 3);
  CHECK(r.elems[2].kind == K::Grads);

  FakeCtx ad("adamw");
  ad.arg(m, "m").kw("lr", Type::of(K::Float), "1e-3");
  Type opt = ad.run();
  CHECK(opt.kind == K::Optim);
  CHECK(opt.optim_kind == types::OptimKind::AdamW);

  Type g = Type::of(K::Grads);
  g.model = &mlp;
  FakeCtx up("update");
  up.arg(m, "m").arg(opt, "opt").arg(g, "g");
  CHECK(up.run().kind == K::Unit);

  types::ModelInfo other;
  other.name = "Other";
  Type g2 = Type::of(K::Grads);
  g2.model = &other;
  FakeCtx ub("update");
  ub.arg(m, "m").arg(opt, "opt").arg(g2, "g");
  CHECK(ub.run().is_error());
  CHECK(ub.errors[0].code == diag::Code::E0303);

  // Grads arithmetic: g1 + g2, g * 0.5.
  CHECK(bin("add", g, g).kind == K::Grads);
  CHECK(bin("mul", g, Type::of(K::Float)).kind == K::Grads);
}

TEST_CASE("data and output", "[ops]") {
  types::RecordInfo digit;
  digit.name = "Digit";
  types::FieldInfo img = field("img", T({D}));
  img.has_domain = true;
  img.domain_lo = 0;
  img.domain_hi = 1;
  img.domain_inclusive = true;
  types::FieldInfo label = field("label", Type::scalar(DType::I64));
  label.has_domain = true;
  label.domain_lo = 0;
  label.domain_hi = 10;
  digit.fields = {img, label};
  Type rec = Type::of(K::Record);
  rec.record = &digit;

  FakeCtx sd("synthetic_digits");
  sd.type_arg("record", rec).arg(Type::of(K::Int), "60000");
  Type ds = sd.run();
  CHECK(sd.errors.empty());
  CHECK(ds.kind == K::Dataset);

  types::RecordInfo wrong = digit;
  wrong.fields[0].type = T({C});
  Type rw = Type::of(K::Record);
  rw.record = &wrong;
  FakeCtx sw("synthetic_digits");
  sw.type_arg("record", rw).arg(Type::of(K::Int));
  CHECK(sw.run().is_error());
  REQUIRE(sw.errors.size() == 1);
  CHECK(sw.errors[0].code == diag::Code::E0303);

  FakeCtx bt("batches");
  bt.arg(ds, "train").arg(Type::of(K::Int), "64");
  Type bs = bt.run();
  CHECK(bs.kind == K::Batches);

  FakeCtx lg("logs");
  lg.extra_kw("loss", Type::scalar(DType::F32))
      .extra_kw("acc", Type::scalar(DType::F32));
  Type logs = lg.run();
  REQUIRE(logs.kind == K::Logs);
  CHECK(logs.fields.size() == 2);

  FakeCtx ml("mean_logs");
  Type ev = Type::of(K::Fn);
  ev.fn_name = "evaluate";
  ml.arg(ev, "evaluate").arg(Type::of(K::Model), "m").arg(bs, "batches");
  ml.fn([&](const std::vector<Type>& a) {
    CHECK(a[1].kind == K::Batch);
    return logs;
  });
  CHECK(ml.run().kind == K::Logs);

  FakeCtx w("write");
  w.arg(Type::of(K::Sink)).arg(logs);
  CHECK(w.run().kind == K::Unit);
}

TEST_CASE("collectives", "[ops]") {
  Axis m = Axis::variable(5, "m");
  Axis k = Axis::variable(6, "k");
  Axis mx = m;
  mx.split = types::MeshSplit({"x"}, {4});
  Axis ky = k;
  ky.split = types::MeshSplit({"y"}, {2});

  FakeCtx out("psum");
  out.arg(T({m})).arg(Type::of(K::AxisArg), "y");
  CHECK(out.run().is_error());
  REQUIRE(out.errors.size() == 1);
  CHECK(out.errors[0].code == diag::Code::E2002);
  CHECK(out.errors[0].message ==
        "psum is a collective and may only be used inside an spmd fn");

  Type v = T({mx, n});
  v.varying = {"x", "y"};
  FakeCtx ps("psum");
  ps.spmd({{"x", 4}, {"y", 2}}).arg(v).arg(Type::of(K::AxisArg), "y");
  Type r = ps.run();
  CHECK(ps.errors.empty());
  CHECK(r.varying == std::vector<std::string>{"x"});

  FakeCtx nz("psum");
  nz.spmd({{"x", 4}}).arg(v).arg(Type::of(K::AxisArg), "z");
  CHECK(nz.run().is_error());
  CHECK(nz.errors[0].code == diag::Code::E2002);

  FakeCtx ag("all_gather");
  ag.spmd({{"x", 4}})
      .arg(T({mx, k}))
      .axis_arg("axis", Axis::lit(4), "x")
      .over({"m"});
  r = ag.run();
  CHECK(ag.errors.empty());
  CHECK(r.shape == std::vector<Axis>{m, k});

  FakeCtx pss("psum_scatter");
  pss.spmd({{"x", 4}, {"y", 2}})
      .arg(T({ky, n}))
      .axis_arg("axis", Axis::lit(4), "x")
      .over({"k"});
  r = pss.run();
  CHECK(pss.errors.empty());
  CHECK(r.shape[0].split.axes == std::vector<std::string>{"y", "x"});
  CHECK(r.shape[0].split.sizes == std::vector<int64_t>{2, 4});

  FakeCtx ai("axis_index");
  ai.spmd({{"x", 4}}).axis_arg("axis", Axis::lit(4), "x");
  r = ai.run();
  CHECK(r.dtype == DType::I32);
  CHECK(r.varying == std::vector<std::string>{"x"});
}

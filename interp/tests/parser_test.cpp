#include "interp/parse/parser.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "interp/lex/lexer.h"

using namespace ss;
using ast::Expr;
using ast::Stmt;
using diag::Code;

namespace {

const char* kReadme = R"(devices cpu

dim D = 784
dim Hd = 256
dim C = 10

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))

fn forward(m: Mlp, x: [b D]) -> [b C]:
    return relu(x @ m.w1) @ m.w2

fn loss(m: Mlp, batch: [b] Digit) -> f32:
    return cross_entropy(forward(m, batch.img), batch.label)

fn train_step(mut m: Mlp, mut opt: AdamW[Mlp], batch: [b] Digit) -> Logs:
    let l, g = value_and_grad(loss, m, batch)
    update(m, opt, g)
    return logs(loss=l)

fn evaluate(m: Mlp, batch: [b] Digit) -> Logs:
    let logits = forward(m, batch.img)
    return logs(loss=cross_entropy(logits, batch.label),
                acc=mean(argmax(logits, over=C) == batch.label))

fn run(train: Dataset[Digit], mut m: Mlp, mut opt: AdamW[Mlp], out: Sink):
    for epoch in range(3):
        for batch in progress(train.batches(64, shuffle=epoch)):
            out.write(train_step(m, opt, batch))

fn main():
    let train, test = synthetic_digits(Digit, 60000, seed=0).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    run(train, m, opt, csv("train.csv"))
    print(mean_logs(evaluate, m, test.batches(1000)))
    save("mlp.safetensors", m, opt)
)";

const char* kAttention = R"(devices cuda[0 1 2]
    split H

dim D = 768
dim H = 12
dim Dh = 64

model Attention:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)

fn attention(m: Attention, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    return rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o
)";

struct Parsed {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  ast::Module m;
  parse::ReplInput repl;
  std::string text_of(diag::Span s) const { return std::string(sm.text(s)); }
  uint32_t line(size_t i = 0) const {
    return sm
        .line_col(diags.list().at(i).span.file, diags.list().at(i).span.begin)
        .line;
  }
  std::string dump() const { return diag::render_terminal(diags, sm); }
};

std::unique_ptr<Parsed> parse_text(const std::string& text, bool repl = false) {
  auto p = std::make_unique<Parsed>();
  uint32_t f = p->sm.add("test.ss", text);
  auto toks = lex::lex(p->sm, f, p->diags);
  if (repl)
    p->repl = parse::parse_repl(toks, f, p->diags);
  else
    p->m = parse::parse(toks, f, p->diags);
  p->diags.sort();
  return p;
}

/// Parses `fn t():` + the statement, and returns the fn's body.
std::unique_ptr<Parsed> parse_body(const std::string& stmts) {
  std::string text = "fn t():\n";
  size_t b = 0;
  while (b < stmts.size()) {
    size_t e = stmts.find('\n', b);
    if (e == std::string::npos) e = stmts.size();
    text += "    " + stmts.substr(b, e - b) + "\n";
    b = e + 1;
  }
  return parse_text(text);
}

const Expr& expr_of(const Parsed& p, size_t stmt = 0) {
  const auto& body = p.m.fns.at(0).body;
  const Stmt& s = *body.at(stmt);
  return s.value ? *s.value : *s.cond;
}

const Expr& parse_expr_text(std::unique_ptr<Parsed>& holder,
                            const std::string& e) {
  holder = parse_body(e);
  INFO(holder->dump());
  REQUIRE(holder->diags.empty());
  return expr_of(*holder);
}

/// A compact rendering of an expression to test structure.
std::string show(const Expr& e);
std::string show_axis(const ast::AxisExpr& a) {
  std::string s;
  switch (a.kind) {
    case ast::AxisExpr::Kind::Name:
      s = a.name;
      break;
    case ast::AxisExpr::Kind::Literal:
      s = std::to_string(a.value);
      break;
    case ast::AxisExpr::Kind::Star:
      s = "*" + a.name;
      break;
    case ast::AxisExpr::Kind::Group:
      s = "(";
      for (size_t i = 0; i < a.items.size(); ++i)
        s += (i ? " " : "") + show_axis(a.items[i]);
      s += ")";
      break;
  }
  if (!a.split.empty()) {
    s += "/";
    for (size_t i = 0; i < a.split.size(); ++i)
      s += (i ? "," : "") + a.split[i];
  }
  return s;
}
std::string show_item(const ast::PatternItem& it) {
  switch (it.kind) {
    case ast::PatternItem::Kind::Name:
      return it.name;
    case ast::PatternItem::Kind::Literal:
      return std::to_string(it.value);
    case ast::PatternItem::Kind::Group: {
      std::string s = "(";
      for (size_t i = 0; i < it.items.size(); ++i)
        s += (i ? " " : "") + show_item(it.items[i]);
      return s + ")";
    }
  }
  return "?";
}
std::string show_side(const ast::PatternSide& side) {
  std::string s;
  for (size_t i = 0; i < side.items.size(); ++i)
    s += (i ? " " : "") + show_item(side.items[i]);
  return s;
}
std::string show_type(const ast::TypeExpr& t) {
  std::string s;
  switch (t.kind) {
    case ast::TypeExpr::Kind::Tensor:
      s = "[";
      for (size_t i = 0; i < t.axes.size(); ++i)
        s += (i ? " " : "") + show_axis(t.axes[i]);
      s += "]";
      if (!t.elem.empty()) s += " " + t.elem;
      return s;
    case ast::TypeExpr::Kind::Named:
      s = t.name;
      if (t.has_args) {
        s += "[";
        for (size_t i = 0; i < t.args.size(); ++i)
          s += (i ? " " : "") + show_axis(t.args[i]);
        s += "]";
      }
      if (!t.split.empty()) {
        s += "/";
        for (size_t i = 0; i < t.split.size(); ++i)
          s += (i ? "," : "") + t.split[i];
      }
      if (!t.field_specs.empty()) {
        s += "{";
        for (size_t i = 0; i < t.field_specs.size(); ++i) {
          s += (i ? ", " : "") + t.field_specs[i].field;
          for (const auto& x : t.field_specs[i].split) s += "/" + x;
        }
        s += "}";
      }
      return s;
    case ast::TypeExpr::Kind::Tuple:
      s = "(";
      for (size_t i = 0; i < t.elems.size(); ++i)
        s += (i ? ", " : "") + show_type(t.elems[i]);
      return s + ")";
  }
  return "?";
}
std::string show(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::Name:
      return e.name;
    case Expr::Kind::Int:
      return std::to_string(e.int_value);
    case Expr::Kind::Float: {
      std::string s = std::to_string(e.float_value);
      return s;
    }
    case Expr::Kind::String:
      return "\"" + e.name + "\"";
    case Expr::Kind::FString:
      return "f\"...\"";
    case Expr::Kind::Bool:
      return e.bool_value ? "true" : "false";
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      std::string s = e.kind == Expr::Kind::List ? "[" : "(";
      for (size_t i = 0; i < e.elems.size(); ++i)
        s += (i ? ", " : "") + show(*e.elems[i]);
      return s + (e.kind == Expr::Kind::List ? "]" : ")");
    }
    case Expr::Kind::Comprehension: {
      std::string s = "[" + show(*e.elem) + " for";
      for (const auto& t : e.targets) s += " " + t;
      s += " in " + show(*e.iter);
      if (e.cond) s += " if " + show(*e.cond);
      return s + "]";
    }
    case Expr::Kind::Unary:
      return std::string("(") + ast::unary_op_spelling(e.unary_op) +
             (e.unary_op == ast::UnaryOp::Not ? " " : "") + show(*e.lhs) + ")";
    case Expr::Kind::Binary:
      return "(" + show(*e.lhs) + " " + ast::binary_op_spelling(e.binary_op) +
             " " + show(*e.rhs) + ")";
    case Expr::Kind::Call: {
      std::string s = show(*e.callee) + "(";
      bool first = true;
      for (const auto& a : e.args) {
        s += (first ? "" : ", ");
        first = false;
        if (!a.keyword.empty()) s += a.keyword + "=";
        s += show(*a.value);
      }
      if (e.pattern) {
        for (const auto& side : e.pattern->inputs)
          s += (first ? "" : ", ") + show_side(side), first = false;
        s += " -> " + show_side(e.pattern->output);
      }
      return s + ")";
    }
    case Expr::Kind::Field:
      return show(*e.lhs) + "." + e.name;
    case Expr::Kind::Index: {
      std::string s = show(*e.lhs) + "[";
      for (size_t i = 0; i < e.indices.size(); ++i) {
        const auto& it = e.indices[i];
        s += (i ? ", " : "");
        if (it.is_slice)
          s += (it.lo ? show(*it.lo) : "") + ":" + (it.hi ? show(*it.hi) : "");
        else
          s += show(*it.index);
      }
      return s + "]";
    }
    case Expr::Kind::TypeLit:
      return "type " + show_type(*e.type);
    case Expr::Kind::AxisRef:
      return "axis " + show_axis(*e.axis);
  }
  return "?";
}

std::string show_text(const std::string& text) {
  std::unique_ptr<Parsed> p;
  return show(parse_expr_text(p, text));
}

}  // namespace

// ---------------------------------------------------------------- examples

TEST_CASE("parser: the README example", "[parser]") {
  auto p = parse_text(kReadme);
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const auto& m = p->m;
  REQUIRE(m.devices.size() == 1);
  CHECK(m.devices[0].kind == "cpu");
  CHECK(!m.devices[0].has_list);
  REQUIRE(m.dims.size() == 3);
  CHECK(m.dims[0].name == "D");
  CHECK(m.dims[0].value->int_value == 784);
  CHECK(p->text_of(m.dims[2].span) == "dim C = 10");
  REQUIRE(m.datas.size() == 1);
  const auto& d = m.datas[0];
  CHECK(d.name == "Digit");
  REQUIRE(d.fields.size() == 2);
  CHECK(show_type(d.fields[0].type) == "[D]");
  REQUIRE(d.fields[0].domain);
  CHECK(d.fields[0].domain->inclusive);
  CHECK(d.fields[0].domain->lo->float_value == 0.0);
  CHECK(d.fields[0].domain->hi->float_value == 1.0);
  CHECK(show_type(d.fields[1].type) == "i64");
  REQUIRE(d.fields[1].domain);
  CHECK(!d.fields[1].domain->inclusive);
  CHECK(show(*d.fields[1].domain->hi) == "C");
  REQUIRE(m.models.size() == 1);
  REQUIRE(m.models[0].fields.size() == 2);
  CHECK(show_type(m.models[0].fields[0].type) == "[D Hd]");
  CHECK(show(*m.models[0].fields[0].init) == "normal(std=(1 / sqrt(D)))");
  REQUIRE(m.fns.size() == 6);
  const auto& fwd = m.fns[0];
  CHECK(fwd.name == "forward");
  CHECK(p->text_of(fwd.span) == "fn forward(m: Mlp, x: [b D]) -> [b C]:");
  REQUIRE(fwd.params.size() == 2);
  CHECK(show_type(*fwd.params[1].type) == "[b D]");
  CHECK(show_type(*fwd.result) == "[b C]");
  REQUIRE(fwd.body.size() == 1);
  CHECK(fwd.body[0]->kind == Stmt::Kind::Return);
  CHECK(show(*fwd.body[0]->value) == "(relu((x @ m.w1)) @ m.w2)");
  CHECK(p->text_of(fwd.body[0]->span) == "return relu(x @ m.w1) @ m.w2");
  const auto& ts = m.fns[2];
  CHECK(ts.params[0].mut);
  CHECK(show_type(*ts.params[1].type) == "AdamW[Mlp]");
  CHECK(show_type(*ts.params[2].type) == "[b] Digit");
  CHECK(ts.body[0]->kind == Stmt::Kind::Let);
  CHECK(ts.body[0]->targets.size() == 2);
  const auto& ev = m.fns[3];
  CHECK(show(*ev.body[1]->value) ==
        "logs(loss=cross_entropy(logits, batch.label), "
        "acc=mean((argmax(logits, over=axis C) == batch.label)))");
  const auto& run = m.fns[4];
  REQUIRE(run.body.size() == 1);
  CHECK(run.body[0]->kind == Stmt::Kind::For);
  REQUIRE(run.body[0]->body.size() == 1);
  CHECK(run.body[0]->body[0]->kind == Stmt::Kind::For);
  CHECK(!run.result);
  const auto& mainfn = m.fns[5];
  CHECK(mainfn.body.size() == 6);
  CHECK(show(*mainfn.body[0]->value) ==
        "synthetic_digits(Digit, 60000, seed=0).split(0.900000)");
}

TEST_CASE("parser: the attention example", "[parser]") {
  auto p = parse_text(kAttention);
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const auto& m = p->m;
  REQUIRE(m.devices.size() == 1);
  CHECK(m.devices[0].kind == "cuda");
  CHECK(m.devices[0].ids == std::vector<int64_t>{0, 1, 2});
  REQUIRE(m.devices[0].options.size() == 1);
  CHECK(m.devices[0].options[0].words ==
        std::vector<std::string>{"split", "H"});
  CHECK(m.dims.size() == 3);
  REQUIRE(m.models.size() == 1);
  CHECK(show_type(m.models[0].fields[0].type) == "[D (3 H Dh)]");
  CHECK(show_type(m.models[0].fields[1].type) == "[(H Dh) D]");
  REQUIRE(m.fns.size() == 1);
  const auto& body = m.fns[0].body;
  REQUIRE(body.size() == 5);

  const Expr& sp = *body[0]->value;
  REQUIRE(sp.kind == Expr::Kind::Call);
  REQUIRE(sp.args.size() == 1);
  CHECK(show(*sp.args[0].value) == "(x @ m.w_qkv)");
  REQUIRE(sp.pattern);
  REQUIRE(sp.pattern->inputs.size() == 1);
  const auto& in = sp.pattern->inputs[0];
  REQUIRE(in.items.size() == 3);
  REQUIRE(in.items[2].kind == ast::PatternItem::Kind::Group);
  CHECK(in.items[2].items[0].kind == ast::PatternItem::Kind::Literal);
  CHECK(in.items[2].items[0].value == 3);
  CHECK(show_side(sp.pattern->output) == "b H n Dh");
  CHECK(p->text_of(sp.pattern->span) == "b n (3 H Dh) -> b H n Dh");
  CHECK(p->text_of(sp.span) == "split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)");

  const Expr& div = *body[1]->value;
  REQUIRE(div.kind == Expr::Kind::Binary);
  const Expr& es = *div.lhs;
  REQUIRE(es.pattern);
  CHECK(es.args.size() == 2);
  CHECK(es.pattern->inputs.size() == 2);
  CHECK(show(es) == "einsum(q, k, b H n Dh, b H t Dh -> b H n t)");

  CHECK(show(*body[2]->value) ==
        "softmax(masked_fill(s, (not causal(n, t)), (-inf)), over=axis t)");
  CHECK(show(*body[4]->value) ==
        "(rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o)");
}

// ---------------------------------------------------------------- snippets

TEST_CASE("parser: language.md declarations", "[parser]") {
  auto p = parse_text(R"(devices cuda[0 1 2]
    shard params

mesh x=4 y=2

dim D = 784

data Digit:
    img: [D] in 0.0..=1.0
    label: i64 in 0..C
    tokens: [n] i64
    ids: [n] i64 pad=-1
    temp: f32 in -1.5..1.5

model Mlp:
    w1: [D Hd] = normal(std=1/sqrt(D))
    w2: [Hd C] = normal(std=1/sqrt(Hd))
    norm: LayerNorm[C]
    blocks: [L] Block
    buffer mean: [C] = zeros()

model Dense[I O]:
    w: [I O] = normal(std=1/sqrt(I))
    b: [O] = zeros()

fn name(a: T, mut b: U, c: int = 3) -> R:
    return a
fn name2(a: T) -> R = a + 1

spmd fn name3(a: [m/x k/y]) -> [m/x]:
    return a

extern fn layer_norm(x: [*s d], over: Axis[d], eps: float = 1e-5) -> [*s d] = "nn.layer_norm"
import "other.ss"
)");
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const auto& m = p->m;
  CHECK(m.devices[0].options[0].words ==
        std::vector<std::string>{"shard", "params"});
  REQUIRE(m.meshes.size() == 1);
  REQUIRE(m.meshes[0].axes.size() == 2);
  CHECK(m.meshes[0].axes[1].name == "y");
  CHECK(m.meshes[0].axes[1].size == 2);
  const auto& d = m.datas[0];
  REQUIRE(d.fields.size() == 5);
  CHECK(show_type(d.fields[2].type) == "[n] i64");
  CHECK(!d.fields[2].domain);
  CHECK(show(*d.fields[3].pad) == "(-1)");
  CHECK(show(*d.fields[4].domain->lo) == "(-1.500000)");
  REQUIRE(m.models.size() == 2);
  const auto& mlp = m.models[0];
  REQUIRE(mlp.fields.size() == 5);
  CHECK(show_type(mlp.fields[2].type) == "LayerNorm[C]");
  CHECK(!mlp.fields[2].init);
  CHECK(show_type(mlp.fields[3].type) == "[L] Block");
  CHECK(!mlp.fields[3].init);
  CHECK(mlp.fields[4].buffer);
  CHECK(mlp.fields[4].name == "mean");
  REQUIRE(m.models[1].dim_params.size() == 2);
  CHECK(m.models[1].dim_params[1].name == "O");
  REQUIRE(m.fns.size() == 4);
  CHECK(m.fns[0].params[1].mut);
  CHECK(show(*m.fns[0].params[2].default_value) == "3");
  CHECK(m.fns[1].expr_body);
  CHECK(p->text_of(m.fns[1].span) == "fn name2(a: T) -> R = a + 1");
  CHECK(m.fns[2].is_spmd);
  CHECK(m.fns[2].spmd_check);
  CHECK(show_type(*m.fns[2].params[0].type) == "[m/x k/y]");
  CHECK(m.fns[3].is_extern);
  CHECK(m.fns[3].extern_target == "nn.layer_norm");
  CHECK(show_type(*m.fns[3].params[0].type) == "[*s d]");
  CHECK(show_type(*m.fns[3].params[1].type) == "Axis[d]");
  REQUIRE(m.imports.size() == 1);
  CHECK(m.imports[0].path == "other.ss");
}

TEST_CASE("parser: spmd.md snippets", "[parser]") {
  auto p = parse_text(R"(mesh x=4 y=2

spmd fn matmul_basic(a: [m/x k/y], b: [k/y n]) -> [m/x n]:
    return psum(a @ b, y)

spmd(check=false) fn pp(m: Net{w_inner/stages, b_inner/stages}, n2: Net/x, n3: Net/(x y), xs: [A/(feats batch)]) -> [r]:
    let z = zeros([L/stages q F])
    let a = all_gather(v, x, over=A, tiled=false)
    let b2 = psum_scatter(v, x, over=A)
    let c = ppermute(v, x, perm=[(0, 1), (1, 2)])
    let d = ppermute(v, x, shift=1)
    let e = all_to_all(v, x, split=A, concat=B)
    let f = psum(v, (x, y))
    let g = take(v, (axis_index(x) + 1) % axis_size(x), over=A)
    let h = pvary(v, x)
    return put(v, i, w, over=A)
)");
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const auto& fns = p->m.fns;
  REQUIRE(fns.size() == 2);
  CHECK(fns[1].is_spmd);
  CHECK(!fns[1].spmd_check);
  CHECK(show_type(*fns[1].params[0].type) ==
        "Net{w_inner/stages, b_inner/stages}");
  CHECK(show_type(*fns[1].params[1].type) == "Net/x");
  CHECK(show_type(*fns[1].params[2].type) == "Net/x,y");
  CHECK(show_type(*fns[1].params[3].type) == "[A/feats,batch]");
  const auto& b = fns[1].body;
  CHECK(show(*b[0]->value) == "zeros(type [L/stages q F])");
  CHECK(show(*b[3]->value) == "ppermute(v, x, perm=[(0, 1), (1, 2)])");
  CHECK(show(*b[5]->value) == "all_to_all(v, x, split=axis A, concat=axis B)");
  CHECK(show(*b[6]->value) == "psum(v, (x, y))");
}

TEST_CASE("parser: library.md calls", "[parser]") {
  const char* cases[][2] = {
      {"gelu(x, approximate=\"tanh\")", "gelu(x, approximate=\"tanh\")"},
      {"concat(xs, over=n, as=m)", "concat(xs, over=axis n, as=axis m)"},
      {"reshape(x, [64, D])", "reshape(x, [64, D])"},
      {"tensor([1, 2, 3], dtype=i64)", "tensor([1, 2, 3], dtype=i64)"},
      {"zeros([2, 8, F])", "zeros([2, 8, F])"},
      {"zeros([b D] f64)", "zeros(type [b D] f64)"},
      {"full([8] i64, 0)", "full(type [8] i64, 0)"},
      {"zeros([D])", "zeros([D])"},
      {"zeros([])", "zeros([])"},
      {"zeros([] f64)", "zeros(type [] f64)"},
      {"zeros([(H Dh)])", "zeros(type [(H Dh)])"},
      {"stack(xs, new=N)", "stack(xs, new=axis N)"},
      {"reduce(x, over=D, with=sum)", "reduce(x, over=axis D, with=sum)"},
      {"sum(x, over=(H Dh))", "sum(x, over=axis (H Dh))"},
      {"sum(x, over=(n, D))", "sum(x, over=(axis n, axis D))"},
      {"sum(x, over=-1)", "sum(x, over=axis -1)"},
      {"sum(x, over=0)", "sum(x, over=axis 0)"},
      {"value_and_grad(f, m, x, aux=true)",
       "value_and_grad(f, m, x, aux=true)"},
      {"adamw(m, lr=1e-3, betas=(0.9, 0.999))",
       "adamw(m, lr=0.001000, betas=(0.900000, 0.999000))"},
      {"out.write(r, step=i)", "out.write(r, step=i)"},
      {"ds.batches(n, shuffle=seed, drop_last=false)",
       "ds.batches(n, shuffle=seed, drop_last=false)"},
      {"x[a:b]", "x[a:b]"},
      {"x[:, 0]", "x[:, 0]"},
      {"x[i, j]", "x[i, j]"},
      {"x[1:]", "x[1:]"},
      {"m.blocks[i]", "m.blocks[i]"},
      {"rearrange(x, (K m) F -> K m F)", "rearrange(x, (K m) F -> K m F)"},
      {"x.rearrange(b n -> n b)", "x.rearrange(b n -> n b)"},
      {"einsum(a, b, i j, j k -> )", "einsum(a, b, i j, j k -> )"},
      {"rearrange(x, b n -> b 1 n, as=m)",
       "rearrange(x, as=axis m, b n -> b 1 n)"},
      {"[(i, (i + 1) % n) for i in range(n)]",
       "[(i, ((i + 1) % n)) for i in range(n)]"},
      {"[x for x in xs if x > 0]", "[x for x in xs if (x > 0)]"},
      {"[f(x)]", "[f(x)]"},
      {"(a,)", "(a)"},
      {"()", "()"},
      {"Train(seed=s)", "Train(seed=s)"},
      {"clip(x, -1.0, 1.0)", "clip(x, (-1.000000), 1.000000)"},
  };
  for (const auto& c : cases) {
    INFO(c[0]);
    CHECK(show_text(c[0]) == c[1]);
  }
}

TEST_CASE("parser: statements", "[parser]") {
  auto p = parse_body(
      "let x = e\n"
      "let l, g = e\n"
      "let y: [b D] f64 = zeros([b D] f64)\n"
      "x = e\n"
      "m.w1 = e\n"
      "x[i] = e\n"
      "x += e\n"
      "x -= e\n"
      "x *= e\n"
      "x /= e\n"
      "if c: break\n"
      "if a:\n    f()\nelif b:\n    g()\nelse:\n    h()\n"
      "for x in e:\n    continue\n"
      "for i, x in enumerate(e):\n    print(i)\n"
      "while x < 3:\n    x += 1\n"
      "return\n"
      "return e\n"
      "return a, b\n"
      "print(f\"step {i} loss {l:.4f}\")\n");
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const auto& b = p->m.fns[0].body;
  REQUIRE(b.size() == 19);
  CHECK(b[1]->targets.size() == 2);
  CHECK(show_type(*b[2]->annotation) == "[b D] f64");
  CHECK(b[3]->kind == Stmt::Kind::Assign);
  CHECK(show(*b[4]->target) == "m.w1");
  CHECK(show(*b[5]->target) == "x[i]");
  CHECK(b[6]->kind == Stmt::Kind::AugAssign);
  CHECK(b[6]->aug_op == ast::BinaryOp::Add);
  CHECK(b[7]->aug_op == ast::BinaryOp::Sub);
  CHECK(b[8]->aug_op == ast::BinaryOp::Mul);
  CHECK(b[9]->aug_op == ast::BinaryOp::Div);
  CHECK(b[10]->kind == Stmt::Kind::If);
  REQUIRE(b[10]->branches.size() == 1);
  CHECK(b[10]->branches[0].body[0]->kind == Stmt::Kind::Break);
  REQUIRE(b[11]->branches.size() == 3);
  CHECK(!b[11]->branches[2].cond);
  CHECK(b[12]->kind == Stmt::Kind::For);
  CHECK(b[13]->targets.size() == 2);
  CHECK(b[14]->kind == Stmt::Kind::While);
  CHECK(!b[15]->value);
  CHECK(b[17]->value->kind == Expr::Kind::Tuple);
  CHECK(p->text_of(b[17]->span) == "return a, b");
  CHECK(p->text_of(b[11]->span).rfind("if a:", 0) == 0);
}

TEST_CASE("parser: precedence", "[parser]") {
  CHECK(show_text("-x**2") == "(-(x ** 2))");
  CHECK(show_text("a + b * c @ d") == "(a + ((b * c) @ d))");
  CHECK(show_text("not a == b") == "(not (a == b))");
  CHECK(show_text("2**-1") == "(2 ** (-1))");
  CHECK(show_text("a ** b ** c") == "(a ** (b ** c))");
  CHECK(show_text("a or b and not c") == "(a or (b and (not c)))");
  CHECK(show_text("a - b - c") == "((a - b) - c)");
  CHECK(show_text("a // b % c") == "((a // b) % c)");
  CHECK(show_text("a < b + 1") == "(a < (b + 1))");
  CHECK(show_text("-a.b(c)[0]") == "(-a.b(c)[0])");
  CHECK(show_text("(a + b) * c") == "((a + b) * c)");
}

TEST_CASE("parser: spans", "[parser]") {
  auto p = parse_body("let y = (a + b) * foo(c, d)\n");
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const Expr& e = expr_of(*p);
  CHECK(p->text_of(e.span) == "(a + b) * foo(c, d)");
  CHECK(p->text_of(e.rhs->span) == "foo(c, d)");
  CHECK(p->text_of(p->m.fns[0].body[0]->span) == "let y = (a + b) * foo(c, d)");
}

TEST_CASE("parser: f-strings", "[parser]") {
  auto p = parse_body("print(f\"step {i} loss {l:.4f} {{x}} {a[1:2] + 1}\")\n");
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const Expr& call = expr_of(*p);
  const Expr& fs = *call.args.at(0).value;
  REQUIRE(fs.kind == Expr::Kind::FString);
  REQUIRE(fs.fparts.size() == 6);
  CHECK(fs.fparts[0].text == "step ");
  CHECK(show(*fs.fparts[1].expr) == "i");
  CHECK(p->text_of(fs.fparts[1].expr->span) == "i");
  CHECK(fs.fparts[2].text == " loss ");
  CHECK(show(*fs.fparts[3].expr) == "l");
  CHECK(fs.fparts[3].format_spec == ".4f");
  CHECK(p->text_of(fs.fparts[3].expr->span) == "l");
  CHECK(fs.fparts[4].text == " {x} ");
  CHECK(show(*fs.fparts[5].expr) == "(a[1:2] + 1)");
  CHECK(p->text_of(fs.fparts[5].expr->span) == "a[1:2] + 1");

  auto bad = parse_body("print(f\"a {x +} b {\")\n");
  REQUIRE(bad->diags.size() == 2);
  CHECK(bad->diags.list()[0].code == Code::E0101);
  CHECK(bad->line() == 2);
}

TEST_CASE("parser: type literals vs lists", "[parser]") {
  CHECK(show_text("[b D]") == "type [b D]");
  CHECK(show_text("[b D] f64") == "type [b D] f64");
  CHECK(show_text("[8] i64") == "type [8] i64");
  CHECK(show_text("[m/x k]") == "type [m/x k]");
  CHECK(show_text("[*s d]") == "type [*s d]");
  CHECK(show_text("[D]") == "[D]");
  CHECK(show_text("[2, 8, F]") == "[2, 8, F]");
  CHECK(show_text("[]") == "[]");
  CHECK(show_text("[1, 2]") == "[1, 2]");
  CHECK(show_text("[[1, 2], [3, 4]]") == "[[1, 2], [3, 4]]");
  CHECK(show_text("[a - 1]") == "[(a - 1)]");
}

TEST_CASE("parser: more types", "[parser]") {
  auto p = parse_text(
      "fn f(a: (Mlp, AdamW[Mlp]), b: list[str], c: fn, d: Dense[D Hd], "
      "e: Dataset[Digit], g: [], h: [b (3 H Dh)] bf16) -> (f32, [b]):\n"
      "    return a\n");
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  const auto& ps = p->m.fns[0].params;
  CHECK(show_type(*ps[0].type) == "(Mlp, AdamW[Mlp])");
  CHECK(show_type(*ps[1].type) == "list[str]");
  CHECK(show_type(*ps[2].type) == "fn");
  CHECK(show_type(*ps[3].type) == "Dense[D Hd]");
  CHECK(show_type(*ps[4].type) == "Dataset[Digit]");
  CHECK(show_type(*ps[5].type) == "[]");
  CHECK(show_type(*ps[6].type) == "[b (3 H Dh)] bf16");
  CHECK(show_type(*p->m.fns[0].result) == "(f32, [b])");
}

// ---------------------------------------------------------------- errors

TEST_CASE("parser: errors", "[parser]") {
  SECTION("an unclosed bracket is one E0103, with no follow-on errors") {
    auto p = parse_text(
        "dim D = 3\n\nfn f(x: [D]) -> [D]:\n    let h = g(x\n"
        "    return h\n\nfn k() = 1\n");
    INFO(p->dump());
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0103);
    CHECK(p->line() == 4);
  }
  SECTION("an unterminated string in a call is one E0103") {
    auto p = parse_text(
        "fn main():\n    let out = csv(\"train.csv)\n    print(out)\n"
        "fn k() = 1\n");
    INFO(p->dump());
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0103);
    CHECK(p->line() == 2);
    REQUIRE(p->m.fns.size() == 2);
    CHECK(p->m.fns[0].body.size() == 1);  // print(out)
  }
  SECTION("a lexer error quiets the parser on the rest of its line only") {
    auto p = parse_text("fn f():\n    let a = x $ y\n    let b = 1 1\n");
    INFO(p->dump());
    REQUIRE(p->diags.size() == 2);
    CHECK(p->line(0) == 2);
    CHECK(p->line(1) == 3);
  }
  SECTION("E0101 missing ')' after arguments") {
    auto p = parse_text("fn f():\n    return g(x y)\n");
    REQUIRE(p->diags.size() == 1);
    const auto& d = p->diags.list()[0];
    CHECK(d.code == Code::E0101);
    CHECK(d.message == "expected ')' after arguments, found name 'y'");
    CHECK(p->line() == 2);
  }
  SECTION("E0101 not a declaration") {
    auto p = parse_text("dim D = 3\nx = 4\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0101);
    CHECK(p->diags.list()[0].message ==
          "expected a declaration (fn, model, data, dim, devices, mesh, "
          "import), found name 'x'");
    CHECK(p->line() == 2);
    CHECK(p->m.dims.size() == 1);
  }
  SECTION("E0102 unexpected indent") {
    auto p =
        parse_text("fn f():\n    let a = 1\n        let b = 2\n    return a\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0102);
    CHECK(p->diags.list()[0].message == "unexpected indent");
    CHECK(p->line() == 3);
    CHECK(p->m.fns[0].body.size() == 2);
  }
  SECTION("E0102 missing block") {
    auto p = parse_text("fn f():\n    if a:\n    return 1\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].code == Code::E0102);
    CHECK(p->diags.list()[0].message == "expected an indented block after ':'");
    CHECK(p->line() == 3);
  }
  SECTION("E0103 from the lexer") {
    auto p = parse_text("fn f():\n    print(\"abc)\n");
    REQUIRE(!p->diags.empty());
    CHECK(p->diags.list()[0].code == Code::E0103);
    CHECK(p->line() == 2);
  }
  SECTION("pattern errors") {
    auto p = parse_text(
        "fn f():\n"
        "    let a = rearrange(x, y, b n -> n b)\n"
        "    let c = einsum(a, b -> c, d)\n"
        "    let e = rearrange(x, a -> b -> c)\n");
    REQUIRE(p->diags.size() == 3);
    CHECK(p->line(0) == 2);
    CHECK(p->line(1) == 3);
    CHECK(p->diags.list()[1].message ==
          "a pattern's `->` must be in its last part");
    CHECK(p->line(2) == 4);
  }
  SECTION("nesting too deep") {
    std::string deep = "fn f():\n    return " + std::string(500, '(') + "x" +
                       std::string(500, ')') + "\n";
    auto p = parse_text(deep);
    REQUIRE(!p->diags.empty());
    CHECK(p->diags.list()[0].message == "expression nested too deeply");
    std::string minus = "fn f():\n    return " + std::string(1000, '-') + "x\n";
    auto q = parse_text(minus);
    REQUIRE(q->diags.size() == 1);
  }
  SECTION("cannot assign") {
    auto p = parse_text("fn f():\n    f(x) = 3\n");
    REQUIRE(p->diags.size() == 1);
    CHECK(p->diags.list()[0].message == "cannot assign to this expression");
  }
}

TEST_CASE("parser: recovery reports every error", "[parser]") {
  auto p = parse_text(
      "dim D = 3\n"
      "fn f(x: [D]) -> [D]:\n"
      "    let a = x +\n"
      "    let b = a a\n"
      "    return b\n"
      "model M:\n"
      "    w: [D] = * 2\n"
      "    v: [D] = zeros()\n"
      "fn g(: int):\n"
      "    return 1\n"
      "fn h() -> [D]:\n"
      "    return zeros()\n");
  INFO(p->dump());
  REQUIRE(p->diags.size() == 4);
  CHECK(p->line(0) == 3);
  CHECK(p->line(1) == 4);
  CHECK(p->line(2) == 7);
  CHECK(p->line(3) == 9);
  REQUIRE(p->m.fns.size() == 2);
  CHECK(p->m.fns[0].body.size() == 1);  // return b
  CHECK(p->m.fns[1].name == "h");
  REQUIRE(p->m.models.size() == 1);
  CHECK(p->m.models[0].fields.size() == 1);
}

TEST_CASE("parser: two errors in one file", "[parser]") {
  auto p = parse_text("fn f():\n    let = 1\nfn g():\n    return (1\n");
  REQUIRE(p->diags.size() >= 2);
}

TEST_CASE("parser: repl input", "[parser]") {
  auto p = parse_text(
      "dim D = 4\n"
      "let data = data.take(10)\n"
      "data.take(3)\n"
      "fn f(x: [D]) -> [D] = x\n"
      "for i in range(3):\n"
      "    print(i)\n"
      "x += 1\n",
      /*repl=*/true);
  INFO(p->dump());
  REQUIRE(p->diags.empty());
  CHECK(p->repl.decls.dims.size() == 1);
  CHECK(p->repl.decls.fns.size() == 1);
  REQUIRE(p->repl.stmts.size() == 4);
  CHECK(p->repl.stmts[0]->kind == Stmt::Kind::Let);
  CHECK(p->repl.stmts[1]->kind == Stmt::Kind::Expr);
  CHECK(p->repl.stmts[2]->kind == Stmt::Kind::For);
  CHECK(p->repl.stmts[3]->kind == Stmt::Kind::AugAssign);
}

TEST_CASE("parser: empty and odd inputs", "[parser]") {
  CHECK(parse_text("")->diags.empty());
  CHECK(parse_text("\n\n# only a comment\n")->diags.empty());
  diag::Diagnostics d;
  lex::Tokens none;
  auto m = parse::parse(none, 0, d);
  CHECK(d.empty());
  CHECK(m.fns.empty());
  CHECK(!parse_text("fn")->diags.empty());
  CHECK(!parse_text("model")->diags.empty());
  CHECK(!parse_text("    x")->diags.empty());
}

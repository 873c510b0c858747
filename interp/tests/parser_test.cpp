// The parser on the docs' examples and snippets: declarations, statements,
// precedence, spans, f-strings and types.

#include <catch2/catch.hpp>

#include "interp/tests/parser_test_util.h"

using namespace ss;
using ast::Expr;
using ast::Stmt;
using diag::Code;

using namespace parser_test;

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

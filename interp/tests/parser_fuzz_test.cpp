// Deterministic mutation fuzzing of lex + parse: random token and byte
// edits of the spec's two examples must never crash, hang or throw.
// Run under -fsanitize=address,undefined to catch memory errors.

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "interp/fmt/format.h"
#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

using namespace ss;

namespace {

const char* kFuzzReadme = R"(devices cpu

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
            print(f"epoch {epoch} loss {l:.4f} {{ok}}")

fn main():
    let train, test = synthetic_digits(Digit, 60000, seed=0).split(0.9)
    let m = Mlp.init(seed=0)
    let opt = adamw(m, lr=1e-3)
    run(train, m, opt, csv("train.csv"))
    print(mean_logs(evaluate, m, test.batches(1000)))
    save("mlp.safetensors", m, opt)
)";

const char* kFuzzAttention = R"(devices cuda[0 1 2]
    split H

mesh x=4 y=2
dim D = 768
dim H = 12
dim Dh = 64

model Attention:
    w_qkv: [D (3 H Dh)] = normal(std=0.02)
    w_o: [(H Dh) D] = normal(std=0.02)
    buffer n: [L] Block

spmd(check=false) fn f(a: [m/x k/y], n: Net{w/x, b/x}) -> [m/(x y)]:
    return psum(a @ b, (x, y))

extern fn layer_norm(x: [*s d], over: Axis[d], eps: float = 1e-5) -> [*s d] = "nn.layer_norm"

fn attention(m: Attention, x: [b n D]) -> [b n D]:
    let q, k, v = split(x @ m.w_qkv, b n (3 H Dh) -> b H n Dh)
    let s = einsum(q, k, b H n Dh, b H t Dh -> b H n t) / sqrt(Dh)
    let p = softmax(masked_fill(s, not causal(n, t), -inf), over=t)
    let o = einsum(p, v, b H n t, b H t Dh -> b H n Dh)
    let z = zeros([b D] f64) + [(i, (i + 1) % n) for i in range(n) if i > 0][0:2, :]
    if z: break
    return rearrange(o, b H n Dh -> b n (H Dh)) @ m.w_o
)";

// Comments everywhere a layout can move them: after tokens, on lines of
// their own inside brackets, at a dedent, at the end.
const char* kFuzzComments = R"(# a header
dim D = 4   # after a dim
fn f(a: [b D],  # after a parameter
     # on its own line in a bracket
     c: int) -> [b D]:
    # first in a block
    let y = g(a,
        c)  # after a call
    if c > 0:
        return y
    # at a dedent
            # deeper
    return y + \
        1
# the end
)";

const char* kSnippets[] = {
    "(",       ")",      "[",     "]",    "{",        "}",      ":",
    ",",       "->",     "=",     "**",   "-",        "..",     "..=",
    "\n",      "    ",   "\t",    "fn ",  "not ",     "in ",    "f\"{",
    "\"",      "#",      "let ",  "if ",  "else:",    "for ",   "return ",
    "spmd ",   "model ", "data ", "dim ", "devices ", "mesh ",  "extern ",
    "buffer ", "over=",  "@",     "/",    "*",        "(H Dh)", "b n -> n b",
    "1",       "-1",     "x",     "\\",   "}}",       "{{",
};

struct Piece {
  size_t begin, end;
};

/// Byte ranges of the tokens of [text] (for token-level edits).
std::vector<Piece> token_pieces(const std::string& text) {
  diag::SourceMap sm;
  diag::Diagnostics d;
  uint32_t f = sm.add("seed.ss", text);
  std::vector<Piece> out;
  for (const auto& t : lex::lex(sm, f, d))
    if (t.span.end > t.span.begin) out.push_back({t.span.begin, t.span.end});
  return out;
}

std::string mutate(std::string s, std::mt19937& rng) {
  int edits = 1 + static_cast<int>(rng() % 4);
  for (int e = 0; e < edits; ++e) {
    std::vector<Piece> toks = token_pieces(s);
    uint32_t op = rng() % 7;
    if (s.empty()) op = 6;
    if (toks.empty() && op < 4) op = 5;
    switch (op) {
      case 0: {  // delete a token
        Piece p = toks[rng() % toks.size()];
        s.erase(p.begin, p.end - p.begin);
        break;
      }
      case 1: {  // duplicate a token
        Piece p = toks[rng() % toks.size()];
        s.insert(p.end, " " + s.substr(p.begin, p.end - p.begin));
        break;
      }
      case 2: {  // swap two tokens
        Piece a = toks[rng() % toks.size()];
        Piece b = toks[rng() % toks.size()];
        if (a.begin > b.begin) std::swap(a, b);
        if (a.end > b.begin) break;
        std::string ta = s.substr(a.begin, a.end - a.begin);
        std::string tb = s.substr(b.begin, b.end - b.begin);
        s.replace(b.begin, b.end - b.begin, ta);
        s.replace(a.begin, a.end - a.begin, tb);
        break;
      }
      case 3: {  // insert a snippet at a token boundary
        Piece p = toks[rng() % toks.size()];
        const char* snip = kSnippets[rng() % std::size(kSnippets)];
        s.insert(rng() % 2 ? p.begin : p.end, snip);
        break;
      }
      case 4: {  // delete a run of bytes
        size_t at = rng() % s.size();
        s.erase(at, 1 + rng() % 8);
        break;
      }
      case 5: {  // replace a byte
        if (s.empty()) break;
        s[rng() % s.size()] = static_cast<char>(rng() % 256);
        break;
      }
      default: {  // insert a byte
        size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        s.insert(s.begin() + static_cast<long>(at),
                 static_cast<char>(rng() % 128));
        break;
      }
    }
  }
  return s;
}

void lex_and_parse(const std::string& text) {
  diag::SourceMap sm;
  diag::Diagnostics diags;
  uint32_t f = sm.add("fuzz.ss", text);
  lex::Tokens toks = lex::lex(sm, f, diags);
  ast::Module m = parse::parse(toks, f, diags);
  parse::ReplInput r = parse::parse_repl(toks, f, diags);
  // Every reported span must lie inside the file.
  for (const auto& d : diags.list()) {
    REQUIRE(d.span.begin <= d.span.end);
    REQUIRE(d.span.end <= text.size() + 1);
  }
  diags.sort();
  (void)render_terminal(diags, sm);
}

}  // namespace

TEST_CASE("parser fuzz: 3000 mutations of the spec examples", "[fuzz]") {
  std::mt19937 rng(20240601u);
  const std::string seeds[] = {kFuzzReadme, kFuzzAttention};
  for (const auto& s : seeds) REQUIRE_NOTHROW(lex_and_parse(s));
  for (int i = 0; i < 3000; ++i) {
    const std::string& seed = seeds[i % 2];
    std::string text = mutate(seed, rng);
    INFO("mutation " << i << ":\n" << text);
    REQUIRE_NOTHROW(lex_and_parse(text));
  }
}

TEST_CASE("parser fuzz: pathological inputs", "[fuzz]") {
  const std::string cases[] = {
      std::string(5000, '('),
      std::string(5000, '['),
      "fn f():\n    return " + std::string(3000, '-') + "x\n",
      "fn f():\n    return " + std::string(3000, '(') + "x\n",
      "fn f(x: " + std::string(3000, '[') + "\n",
      "fn f(x: [" + std::string(3000, '(') + "D\n",
      "fn f():\n    return rearrange(x, " + std::string(3000, '(') + " -> a)\n",
      "fn f():\n    return f\"" + std::string(300, '{') + "\"\n",
      "fn f():\n    return not " + std::string(3000, 'n') + "\n",
      [] {
        std::string s = "fn f():\n";
        for (int i = 1; i < 400; ++i)
          s += std::string(static_cast<size_t>(i) * 2, ' ') + "if a:\n";
        return s;
      }(),
      [] {
        std::string s = "fn f():\n    return x";
        for (int i = 0; i < 2000; ++i) s += " ** x";
        return s + "\n";
      }(),
      "\xff\xfe\x00\x01",
      "f\"",
      "f\"{",
      "spmd(",
      "extern fn",
      "data D:\n    x: [n] pad=",
      "devices cuda[\n",
      "mesh x=",
  };
  for (const auto& c : cases) REQUIRE_NOTHROW(lex_and_parse(c));
}

namespace {

struct Spelled {
  std::vector<std::string> tokens, comments;
};

// [text]'s tokens as written, and its comments without trailing blanks:
// what formatting must keep (Note [One layout]).
Spelled spelled(const std::string& text) {
  diag::SourceMap sm;
  diag::Diagnostics d;
  uint32_t f = sm.add("x.ss", text);
  std::vector<diag::Span> comments;
  Spelled out;
  for (const auto& t : lex::lex(sm, f, d, comments)) {
    // Newline, Indent, Dedent and Eof by their kind: their spans move.
    const bool structure =
        t.kind == lex::Tok::Newline || t.kind == lex::Tok::Indent ||
        t.kind == lex::Tok::Dedent || t.kind == lex::Tok::Eof;
    out.tokens.push_back(std::to_string(static_cast<int>(t.kind)) + ":" +
                         (structure ? "" : std::string(sm.text(t.span))));
  }
  for (diag::Span c : comments) {
    std::string_view s = sm.text(c);
    while (!s.empty() &&
           (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
      s.remove_suffix(1);
    out.comments.emplace_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("fmt fuzz: 3000 mutations formatted keep their tokens and comments",
          "[fuzz]") {
  // `ss fmt` over the mutants the parser fuzzing makes: it never throws,
  // never refuses a file that parses (its own check of tokens), and what
  // it gives back has the input's tokens (Newline/Indent/Dedent included,
  // spans aside) and comments, and formats to itself.
  std::mt19937 rng(20261204u);
  const std::string seeds[] = {kFuzzReadme, kFuzzAttention, kFuzzComments};
  int formatted = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string text = i < 3 ? seeds[i] : mutate(seeds[i % 3], rng);
    INFO("mutation " << i << ":\n" << text);
    diag::SourceMap sm;
    diag::Diagnostics diags;
    std::string refused;
    std::optional<std::string> out;
    REQUIRE_NOTHROW(
        out = fmt::format_text("f.ss", text, sm, diags, {}, &refused));
    REQUIRE(refused.empty());
    if (!out) {
      REQUIRE(!diags.empty());
      continue;
    }
    ++formatted;
    std::string input =
        text.rfind("\xEF\xBB\xBF", 0) == 0 ? text.substr(3) : text;
    Spelled a = spelled(input), b = spelled(*out);
    REQUIRE(a.comments == b.comments);
    REQUIRE(a.tokens == b.tokens);
    diag::SourceMap sm2;
    diag::Diagnostics d2;
    std::optional<std::string> again = fmt::format_text("f.ss", *out, sm2, d2);
    REQUIRE(again);
    REQUIRE(*again == *out);
  }
  // Most mutants do not parse; enough do for this to mean something (282
  // with this seed).
  CHECK(formatted >= 250);
}

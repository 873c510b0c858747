// Note [Spaces between tokens]
// The canonical spacing is black's, which PyTorch and JAX users read every
// day: one space around binary operators, `=`, `->` and after `,` and `:`;
// none inside brackets, before `,` `:` `)` `.`, after a unary `-` or `+`,
// between a callee or an indexed value and its `(` or `[`, around `..` and
// `..=`, around a keyword argument's `=` (`std=0.02`, `spmd(check=false)`)
// and a slice's `:` (`x[1:3]`). A parameter's default is spaced when the
// parameter is typed (`eps: float = 1e-5`), as PEP 8 says. Inside a region
// of words side by side (Note [Words side by side] in roles.cpp) the
// author's whitespace decides, except where tokens can never run together.
#include "interp/fmt/spacing.h"

namespace ss::fmt {

namespace {

using lex::Tok;

bool opens(Tok t) {
  return t == Tok::LParen || t == Tok::LBracket || t == Tok::LBrace;
}
bool closes(Tok t) {
  return t == Tok::RParen || t == Tok::RBracket || t == Tok::RBrace;
}

// A value ends here: a `-` after it is binary, a `(` or `[` after it a
// call or an index.
bool ends_value(Tok t) {
  return t == Tok::Name || t == Tok::Int || t == Tok::Float ||
         t == Tok::String || t == Tok::FString || t == Tok::KwTrue ||
         t == Tok::KwFalse || closes(t);
}

// Inside a region of words side by side.
bool word_space(Tok a, Tok b, bool written) {
  if (b == Tok::Comma || closes(b) || opens(a)) return false;
  if (a == Tok::Comma || a == Tok::Arrow || b == Tok::Arrow) return true;
  if (a == Tok::Slash || b == Tok::Slash || a == Tok::Star ||
      a == Tok::Assign || b == Tok::Assign || a == Tok::DotDot ||
      b == Tok::DotDot)
    return false;
  if (closes(a) && (b == Tok::Name || b == Tok::Int)) return true;
  return written;
}

}  // namespace

std::vector<bool> spaces_before(const std::vector<size_t>& line,
                                const lex::Tokens& tokens,
                                const TokenRoles& roles) {
  std::vector<bool> out(line.size(), false);
  std::vector<Tok> brackets;  // open brackets before the current token
  // Whether the token at position k is a unary `-` or `+`.
  std::vector<bool> unary(line.size(), false);
  for (size_t k = 0; k < line.size(); ++k) {
    const lex::Token& b = tokens[line[k]];
    if (k > 0) {
      const lex::Token& a = tokens[line[k - 1]];
      const Tok ta = a.kind, tb = b.kind;
      const uint32_t ra = roles.region[line[k - 1]];
      const uint32_t rb = roles.region[line[k]];
      bool space;
      if (ra != 0 && ra == rb) {
        space = word_space(ta, tb, b.span.begin > a.span.end);
      } else if (tb == Tok::Comma || closes(tb) || tb == Tok::Dot) {
        space = false;
      } else if (ta == Tok::Comma) {
        space = true;  // `y[0, :]` too
      } else if (tb == Tok::Colon || opens(ta) || ta == Tok::Dot) {
        space = false;
      } else if (ta == Tok::Colon) {
        // A slice's colon: `x[1:3]`, `x[:, i]`.
        space = brackets.empty() || brackets.back() != Tok::LBracket;
      } else if (ta == Tok::DotDot || ta == Tok::DotDotEq ||
                 tb == Tok::DotDot || tb == Tok::DotDotEq) {
        space = false;
      } else if (roles.tight_assign[line[k - 1]] ||
                 roles.tight_assign[line[k]]) {
        space = false;
      } else if ((tb == Tok::LParen || tb == Tok::LBracket) && ends_value(ta) &&
                 ta != Tok::KwTrue && ta != Tok::KwFalse) {
        space = false;
      } else if (unary[k - 1]) {
        space = false;
      } else {
        space = true;
      }
      out[k] = space;
    }
    // Is this token unary, or a keyword argument's `=`?
    if (b.kind == Tok::Minus || b.kind == Tok::Plus) {
      const Tok prev = k == 0 ? Tok::Newline : tokens[line[k - 1]].kind;
      unary[k] = !ends_value(prev);
    }
    if (opens(b.kind)) brackets.push_back(b.kind);
    if (closes(b.kind) && !brackets.empty()) brackets.pop_back();
  }
  // A keyword's `=` inside brackets: `(` or `,`, a name, `=`.
  brackets.clear();
  for (size_t k = 0; k < line.size(); ++k) {
    const Tok t = tokens[line[k]].kind;
    if (t == Tok::Assign && !brackets.empty() && k >= 2 &&
        roles.region[line[k]] == 0 && tokens[line[k - 1]].kind == Tok::Name &&
        (tokens[line[k - 2]].kind == Tok::LParen ||
         tokens[line[k - 2]].kind == Tok::Comma)) {
      out[k] = false;
      if (k + 1 < line.size()) out[k + 1] = false;
    }
    if (opens(t)) brackets.push_back(t);
    if (closes(t) && !brackets.empty()) brackets.pop_back();
  }
  return out;
}

}  // namespace ss::fmt

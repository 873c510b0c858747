// Note [One layout]
// `ss fmt` gives every file one layout, as gofmt, rustfmt and black do, so
// that no review argues about spaces: four spaces a block level, the
// spacing of Note [Spaces between tokens] (spacing.cpp), long lines broken
// after commas inside brackets (Note [Breaking a long line],
// line_layout.cpp), no trailing whitespace, one newline at the end. What
// the author chose and a reader needs is kept: every comment, where it was
// (after a token, or on a line of its own at its block's indentation), and
// the paragraphs: a run of blank lines becomes one, none opens a block or
// the file, and a declaration with a body is set off from its neighbours
// by one (the comments just above a declaration go with it).
//
// It works on tokens, not on the syntax tree: the tokens are written back
// as they were spelled (a number's `1e-3`, a string's escapes, an
// f-string), only the whitespace between them changes, and the parser is
// asked only where words sit side by side (Note [Words side by side],
// roles.cpp). A file that does not parse is not formatted. And before
// anything is returned the result is lexed again and its tokens and
// comments compared with the input's, as black compares syntax trees: a
// layout that would change a program is refused, never written.
#include "interp/fmt/format.h"

#include <algorithm>

#include "interp/fmt/line_layout.h"
#include "interp/fmt/roles.h"
#include "interp/fmt/spacing.h"
#include "interp/lex/lexer.h"
#include "interp/parse/parser.h"

namespace ss::fmt {

namespace {

using lex::Tok;

bool structural(Tok t) {
  return t == Tok::Newline || t == Tok::Indent || t == Tok::Dedent ||
         t == Tok::Eof;
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

struct Line {
  std::vector<size_t> toks;  // indices into the file's tokens
  int depth = 0;
  uint32_t first_line = 0, last_line = 0;  // 1-based source lines
  uint32_t column = 0;                     // of its first token, 1-based
};

struct Comment {
  std::string_view text;
  uint32_t line = 0, column = 0;
  size_t next_line = 0;  // the logical line it precedes (size(): the end)
};

class Formatter {
 public:
  Formatter(const diag::SourceMap& sm,
            uint32_t file,
            const lex::Tokens& tokens,
            const std::vector<diag::Span>& comments,
            const TokenRoles& roles,
            const Options& options)
      : sm_(sm),
        file_(file),
        tokens_(tokens),
        roles_(roles),
        options_(options),
        before_(tokens.size()),
        after_(tokens.size()) {
    split_lines();
    place_comments(comments);
  }

  std::string run() {
    std::string out;
    std::vector<uint32_t> columns;  // source column of each depth's line
    uint32_t prev_last = 0;         // last source line written
    bool any = false;
    size_t c = 0;  // next between-lines comment
    for (size_t li = 0; li <= lines_.size(); ++li) {
      const bool end = li == lines_.size();
      const int next_depth = end ? 0 : lines_[li].depth;
      const int prev_depth = li == 0 ? 0 : lines_[li - 1].depth;
      const bool after_opener =
          li > 0 && next_depth > prev_depth &&
          tokens_[lines_[li - 1].toks.back()].kind == Tok::Colon;
      // The comments before this line, and the depth of each.
      size_t first = c;
      while (c < between_.size() && between_[c].next_line == li) ++c;
      std::vector<int> depth(c - first);
      for (size_t k = first; k < c; ++k)
        depth[k - first] =
            comment_depth(between_[k], prev_depth, next_depth, columns);
      // Where the group that goes with a top-level declaration starts.
      size_t group = c;
      while (group > first && depth[group - 1 - first] == next_depth) --group;
      const bool declaration_apart = !end && next_depth == 0 && li > 0 &&
                                     (prev_depth > 0 || opens_block(li));
      bool first_inside = after_opener;
      auto blank = [&](uint32_t first_line, bool group_start) {
        uint32_t gap =
            first_line > prev_last + 1 ? first_line - prev_last - 1 : 0;
        bool one = any && !first_inside && gap > 0;
        if (group_start && declaration_apart && any) one = true;
        if (one) out += '\n';
      };
      for (size_t k = first; k < c; ++k) {
        const Comment& cm = between_[k];
        blank(cm.line, k == group);
        out.append(static_cast<size_t>(4 * depth[k - first]), ' ');
        out += cm.text;
        out += '\n';
        prev_last = cm.line;
        any = true;
        first_inside = false;
      }
      if (end) break;
      const Line& l = lines_[li];
      blank(l.first_line, group == c);
      lay_out_line(line_tokens(l), 4 * l.depth, options_.width, out);
      prev_last = l.last_line;
      any = true;
      columns.resize(static_cast<size_t>(l.depth) + 1);
      columns[l.depth] = l.column;
    }
    return out;
  }

 private:
  void split_lines() {
    int depth = 0;
    Line cur;
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const Tok t = tokens_[i].kind;
      if (t == Tok::Indent) ++depth;
      if (t == Tok::Dedent) depth = std::max(0, depth - 1);
      if (t == Tok::Newline || t == Tok::Eof) {
        if (!cur.toks.empty()) lines_.push_back(std::move(cur));
        cur = Line{};
        continue;
      }
      if (structural(t)) continue;
      diag::LineCol lc = sm_.line_col(file_, tokens_[i].span.begin);
      diag::LineCol le = sm_.line_col(
          file_, std::max(tokens_[i].span.begin, tokens_[i].span.end - 1));
      if (cur.toks.empty()) {
        cur.depth = depth;
        cur.first_line = lc.line;
        cur.column = lc.column;
      }
      cur.last_line = le.line;
      cur.toks.push_back(i);
      line_of_.emplace_back(i, lines_.size());
    }
  }

  // Each comment goes before the token that follows it, when it has a line
  // of its own, or after the token it follows on its line.
  void place_comments(const std::vector<diag::Span>& comments) {
    for (diag::Span s : comments) {
      diag::LineCol lc = sm_.line_col(file_, s.begin);
      std::string_view text = trim_right(sm_.text(s));
      std::string_view before =
          sm_.line_text(file_, lc.line).substr(0, lc.column - 1);
      const bool own_line =
          before.find_first_not_of(" \t") == std::string_view::npos;
      auto next =
          std::lower_bound(line_of_.begin(),
                           line_of_.end(),
                           s.begin,
                           [&](const std::pair<size_t, size_t>& p, uint32_t o) {
                             return tokens_[p.first].span.begin < o;
                           });
      if (!own_line && next != line_of_.begin()) {
        after_[std::prev(next)->first] = text;
        continue;
      }
      if (next != line_of_.end() &&
          lines_[next->second].toks.front() != next->first) {
        before_[next->first].push_back(text);
        continue;
      }
      between_.push_back(
          Comment{text,
                  lc.line,
                  lc.column,
                  next == line_of_.end() ? lines_.size() : next->second});
    }
  }

  // A comment between a line at [prev] depth and one at [next]: the
  // deepest block between them whose lines start at or left of it.
  static int comment_depth(const Comment& c,
                           int prev,
                           int next,
                           const std::vector<uint32_t>& columns) {
    if (next >= prev) return next;
    for (int d = prev; d > next; --d)
      if (static_cast<size_t>(d) < columns.size() && columns[d] <= c.column)
        return d;
    return next;
  }

  bool opens_block(size_t li) const {
    return li + 1 < lines_.size() && lines_[li + 1].depth > lines_[li].depth;
  }

  std::vector<LineToken> line_tokens(const Line& l) const {
    std::vector<bool> spaces = spaces_before(l.toks, tokens_, roles_);
    std::vector<LineToken> out(l.toks.size());
    for (size_t k = 0; k < l.toks.size(); ++k) {
      const lex::Token& t = tokens_[l.toks[k]];
      LineToken& x = out[k];
      x.text = sm_.text(t.span);
      x.space_before = spaces[k];
      x.opens = t.kind == Tok::LParen || t.kind == Tok::LBracket ||
                t.kind == Tok::LBrace;
      x.closes = t.kind == Tok::RParen || t.kind == Tok::RBracket ||
                 t.kind == Tok::RBrace;
      x.comma = t.kind == Tok::Comma;
      x.comments_before = before_[l.toks[k]];
      x.comment_after = after_[l.toks[k]];
    }
    return out;
  }

  const diag::SourceMap& sm_;
  uint32_t file_;
  const lex::Tokens& tokens_;
  const TokenRoles& roles_;
  const Options& options_;
  std::vector<Line> lines_;
  // (token, its logical line) for every token that is not structural
  std::vector<std::pair<size_t, size_t>> line_of_;
  std::vector<std::vector<std::string_view>> before_;
  std::vector<std::string_view> after_;
  std::vector<Comment> between_;
};

struct Lexed {
  lex::Tokens tokens;
  std::vector<diag::Span> comments;
};

// The same program and comments: the tokens, spelled as written, and the
// comments' texts, in order.
bool same_program(const diag::SourceMap& sm, const Lexed& a, const Lexed& b) {
  if (a.tokens.size() != b.tokens.size() ||
      a.comments.size() != b.comments.size())
    return false;
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    if (a.tokens[i].kind != b.tokens[i].kind) return false;
    if (!structural(a.tokens[i].kind) &&
        sm.text(a.tokens[i].span) != sm.text(b.tokens[i].span))
      return false;
  }
  for (size_t i = 0; i < a.comments.size(); ++i)
    if (trim_right(sm.text(a.comments[i])) !=
        trim_right(sm.text(b.comments[i])))
      return false;
  return true;
}

}  // namespace

std::optional<std::string> format_text(const std::string& path,
                                       std::string text,
                                       diag::SourceMap& sm,
                                       diag::Diagnostics& diags,
                                       const Options& options,
                                       std::string* refused) {
  // A byte order mark is not part of the program (as the checker reads
  // it, interp/check/checker.cpp); the formatted file has none.
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  const size_t errors_before = diags.size();
  const uint32_t file = sm.add(path, std::move(text));
  Lexed in;
  in.tokens = lex::lex(sm, file, diags, in.comments);
  if (diags.size() > errors_before) return std::nullopt;
  ast::Module module = parse::parse(in.tokens, file, diags);
  if (diags.size() > errors_before) return std::nullopt;
  TokenRoles roles = token_roles(module, in.tokens);
  std::string out =
      Formatter(sm, file, in.tokens, in.comments, roles, options).run();

  diag::Diagnostics again;
  const uint32_t check = sm.add(path, out);
  Lexed re;
  re.tokens = lex::lex(sm, check, again, re.comments);
  if (again.empty()) parse::parse(re.tokens, check, again);
  if (!again.empty() || !same_program(sm, in, re)) {
    if (refused)
      *refused =
          "ss fmt would change this file's tokens or comments (a bug in ss "
          "fmt: please report it with the file); the file is left as it is";
    return std::nullopt;
  }
  return out;
}

}  // namespace ss::fmt

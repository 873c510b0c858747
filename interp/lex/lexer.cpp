#include "interp/lex/lexer.h"

#include <cctype>
#include <cstring>
#include <string_view>

namespace ss::lex {

namespace {

constexpr const char* kSpellings[] = {
#define TOK(name, spelling) spelling,
#include "interp/lex/tokens.def"
#undef TOK
};

struct Keyword {
  const char* word;
  Tok tok;
};
constexpr Keyword kKeywords[] = {
    {"fn", Tok::KwFn},
    {"let", Tok::KwLet},
    {"mut", Tok::KwMut},
    {"return", Tok::KwReturn},
    {"if", Tok::KwIf},
    {"elif", Tok::KwElif},
    {"else", Tok::KwElse},
    {"for", Tok::KwFor},
    {"in", Tok::KwIn},
    {"while", Tok::KwWhile},
    {"break", Tok::KwBreak},
    {"continue", Tok::KwContinue},
    {"and", Tok::KwAnd},
    {"or", Tok::KwOr},
    {"not", Tok::KwNot},
    {"true", Tok::KwTrue},
    {"false", Tok::KwFalse},
    {"import", Tok::KwImport},
};

// Longest first, so "**" wins over "*" and "..=" over "..".
struct Punct {
  const char* text;
  Tok tok;
};
constexpr Punct kPuncts[] = {
    {"..=", Tok::DotDotEq},   {"**", Tok::StarStar},   {"//", Tok::SlashSlash},
    {"->", Tok::Arrow},       {"..", Tok::DotDot},     {"+=", Tok::PlusAssign},
    {"-=", Tok::MinusAssign}, {"*=", Tok::StarAssign}, {"/=", Tok::SlashAssign},
    {"==", Tok::EqEq},        {"!=", Tok::NotEq},      {"<=", Tok::LessEq},
    {">=", Tok::GreaterEq},   {"(", Tok::LParen},      {")", Tok::RParen},
    {"[", Tok::LBracket},     {"]", Tok::RBracket},    {"{", Tok::LBrace},
    {"}", Tok::RBrace},       {",", Tok::Comma},       {":", Tok::Colon},
    {".", Tok::Dot},          {"+", Tok::Plus},        {"-", Tok::Minus},
    {"*", Tok::Star},         {"/", Tok::Slash},       {"%", Tok::Percent},
    {"@", Tok::At},           {"=", Tok::Assign},      {"<", Tok::Less},
    {">", Tok::Greater},
};

bool is_name_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

class Lexer {
 public:
  Lexer(std::string_view src,
        uint32_t file,
        uint32_t base,
        diag::Diagnostics& diags,
        std::vector<diag::Span>* comments = nullptr)
      : src_(src),
        file_(file),
        base_(base),
        diags_(diags),
        comments_(comments) {}

  Tokens run() {
    indents_.push_back(0);
    while (pos_ < src_.size()) {
      if (at_line_start_ && brackets_.empty()) {
        if (!line_indent()) continue;  // blank or comment-only line
      }
      char c = src_[pos_];
      if (c == '\n') {
        newline();
        continue;
      }
      if (c == ' ' || c == '\r') {
        ++pos_;
        continue;
      }
      if (c == '\t') {
        // A tab after the indentation is harmless whitespace.
        ++pos_;
        continue;
      }
      if (c == '#') {
        skip_comment();
        continue;
      }
      if (c == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '\n') {
        pos_ += 2;  // explicit line continuation
        continue;
      }
      token();
    }
    if (!brackets_.empty()) {
      // At most kMaxReported errors: 100,000 unclosed brackets made as many
      // diagnostics, each rendering the whole line (3.2 GB, then bad_alloc).
      constexpr size_t kMaxReported = 8;
      for (size_t i = 0; i < brackets_.size() && i < kMaxReported; ++i) {
        const Open& b = brackets_[i];
        auto& d = diags_.error(
            diag::Code::E0103,
            b.span,
            std::string("unclosed '") + kSpellings[int(b.kind)] + "'",
            "opened here and never closed");
        if (i + 1 == kMaxReported && brackets_.size() > kMaxReported)
          d.note("and " + std::to_string(brackets_.size() - kMaxReported) +
                 " more unclosed brackets after this one");
      }
      brackets_.clear();
    }
    if (!out_.empty() && out_.back().kind != Tok::Newline &&
        out_.back().kind != Tok::Dedent)
      push(Tok::Newline, pos_, pos_);
    while (indents_.size() > 1) {
      indents_.pop_back();
      push(Tok::Dedent, pos_, pos_);
    }
    push(Tok::Eof, pos_, pos_);
    return std::move(out_);
  }

 private:
  // Measures the indentation of a new line. Returns false when the line is
  // blank or holds only a comment (it is skipped whole).
  bool line_indent() {
    size_t p = pos_;
    uint32_t width = 0;
    bool tab = false;
    size_t tab_at = 0;
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t')) {
      if (src_[p] == '\t' && !tab) {
        tab = true;
        tab_at = p;
      }
      ++width;
      ++p;
    }
    if (p < src_.size() && src_[p] == '\r') ++p;
    if (p >= src_.size() || src_[p] == '\n' || src_[p] == '#') {
      const size_t hash = p;
      while (p < src_.size() && src_[p] != '\n') ++p;
      if (comments_ && hash < src_.size() && src_[hash] == '#')
        comments_->push_back(span(hash, p));
      pos_ = p < src_.size() ? p + 1 : p;
      return false;
    }
    if (tab)
      diags_
          .error(diag::Code::E0102,
                 span(tab_at, tab_at + 1),
                 "a tab in indentation; ShapeScript indents with spaces only",
                 "tab here")
          .help("replace the tab with spaces");
    pos_ = p;
    at_line_start_ = false;
    next_is_line_start_ = true;
    if (width > indents_.back()) {
      indents_.push_back(width);
      push(Tok::Indent, p, p);
    } else if (width < indents_.back()) {
      while (indents_.size() > 1 && width < indents_.back()) {
        indents_.pop_back();
        push(Tok::Dedent, p, p);
      }
      if (width != indents_.back()) {
        diags_
            .error(diag::Code::E0102,
                   span(p - width, p),
                   "this line's indentation (" + std::to_string(width) +
                       " spaces) matches no enclosing block",
                   "the enclosing block is at " +
                       std::to_string(indents_.back()) + " spaces")
            .help("indent to the level of the block it belongs to");
        // Recover: treat it as that enclosing level.
      }
    }
    return true;
  }

  void newline() {
    if (brackets_.empty()) {
      if (!out_.empty() && out_.back().kind != Tok::Newline &&
          out_.back().kind != Tok::Indent && out_.back().kind != Tok::Dedent)
        push(Tok::Newline, pos_, pos_ + 1);
      at_line_start_ = true;
    }
    ++pos_;
  }

  void skip_comment() {
    const size_t hash = pos_;
    while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
    if (comments_) comments_->push_back(span(hash, pos_));
  }

  void token() {
    size_t start = pos_;
    char c = src_[pos_];
    if ((c == 'f' || c == 'F') && pos_ + 1 < src_.size() &&
        src_[pos_ + 1] == '"') {
      ++pos_;
      string_literal(start, /*format=*/true);
      return;
    }
    if (is_name_start(c)) {
      while (pos_ < src_.size() && is_name_char(src_[pos_])) ++pos_;
      std::string word(src_.substr(start, pos_ - start));
      if (word == "inf" || word == "nan") {
        push(Tok::Float, start, pos_, word);
        return;
      }
      for (const Keyword& k : kKeywords)
        if (word == k.word) {
          push(k.tok, start, pos_, word);
          return;
        }
      push(Tok::Name, start, pos_, word);
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < src_.size() &&
         std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])) &&
         !(pos_ > 0 && src_[pos_ - 1] == '.'))) {
      number(start);
      return;
    }
    if (c == '"') {
      string_literal(start, /*format=*/false);
      return;
    }
    for (const Punct& p : kPuncts) {
      size_t n = std::strlen(p.text);
      if (src_.compare(pos_, n, p.text) == 0) {
        pos_ += n;
        punct(p.tok, start);
        return;
      }
    }
    // An unknown character: report once and skip it.
    size_t len = 1;
    unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0xC0) len = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : 2;
    len = std::min(len, src_.size() - pos_);
    diags_.error(
        diag::Code::E0101,
        span(start, start + len),
        "unexpected character '" + std::string(src_.substr(start, len)) + "'",
        "not part of any token");
    pos_ += len;
  }

  void punct(Tok t, size_t start) {
    if (t == Tok::LParen || t == Tok::LBracket || t == Tok::LBrace) {
      brackets_.push_back({t, span(start, pos_)});
    } else if (t == Tok::RParen || t == Tok::RBracket || t == Tok::RBrace) {
      Tok want = t == Tok::RParen     ? Tok::LParen
                 : t == Tok::RBracket ? Tok::LBracket
                                      : Tok::LBrace;
      if (brackets_.empty()) {
        diags_.error(diag::Code::E0101,
                     span(start, pos_),
                     std::string("unexpected '") + kSpellings[int(t)] +
                         "' with no bracket open",
                     "nothing to close");
      } else if (brackets_.back().kind != want) {
        diags_
            .error(
                diag::Code::E0103,
                brackets_.back().span,
                std::string("unclosed '") +
                    kSpellings[int(brackets_.back().kind)] + "'",
                std::string("closed by '") + kSpellings[int(t)] + "' instead")
            .note("the mismatched bracket", span(start, pos_));
        brackets_.pop_back();
      } else {
        brackets_.pop_back();
      }
    }
    push(t, start, pos_);
  }

  void number(size_t start) {
    bool is_float = false;
    while (pos_ < src_.size() &&
           (std::isdigit(static_cast<unsigned char>(src_[pos_])) ||
            src_[pos_] == '_'))
      ++pos_;
    // A '.' is a decimal point unless it starts '..' (a range: 0..C).
    if (pos_ < src_.size() && src_[pos_] == '.' &&
        !(pos_ + 1 < src_.size() && src_[pos_ + 1] == '.')) {
      is_float = true;
      ++pos_;
      while (pos_ < src_.size() &&
             std::isdigit(static_cast<unsigned char>(src_[pos_])))
        ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() &&
          std::isdigit(static_cast<unsigned char>(src_[p]))) {
        is_float = true;
        pos_ = p;
        while (pos_ < src_.size() &&
               std::isdigit(static_cast<unsigned char>(src_[pos_])))
          ++pos_;
      }
    }
    std::string text;
    for (size_t i = start; i < pos_; ++i)
      if (src_[i] != '_') text += src_[i];
    push(is_float ? Tok::Float : Tok::Int, start, pos_, text);
  }

  void string_literal(size_t start, bool format) {
    ++pos_;  // opening quote
    std::string value;
    size_t raw_begin = pos_;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n') {
        diags_
            .error(diag::Code::E0103,
                   span(start, pos_),
                   "unterminated string",
                   "no closing '\"' on this line")
            .help("close the string with '\"'; write a newline as \\n");
        // The rest of the line is lost, so brackets opened before the
        // string cannot be matched: forget them rather than swallow the
        // following lines into one logical line (one error, not several).
        brackets_.clear();
        push(format ? Tok::FString : Tok::String,
             start,
             pos_,
             format ? std::string(src_.substr(raw_begin, pos_ - raw_begin))
                    : value);
        return;
      }
      char c = src_[pos_];
      if (c == '"') break;
      if (c == '\\' && pos_ + 1 < src_.size() && src_[pos_ + 1] != '\n') {
        char e = src_[pos_ + 1];
        pos_ += 2;
        switch (e) {
          case 'n':
            value += '\n';
            break;
          case 't':
            value += '\t';
            break;
          case '"':
            value += '"';
            break;
          case '\\':
            value += '\\';
            break;
          case '{':
            value += "\\{";
            break;
          case '}':
            value += "\\}";
            break;
          default:
            diags_
                .error(diag::Code::E0101,
                       span(pos_ - 2, pos_),
                       std::string("unknown escape '\\") + e + "'",
                       "only \\n \\\" \\\\ are escapes")
                .help("write a backslash as \\\\");
        }
        continue;
      }
      value += c;
      ++pos_;
    }
    std::string raw(src_.substr(raw_begin, pos_ - raw_begin));
    ++pos_;  // closing quote
    push(
        format ? Tok::FString : Tok::String, start, pos_, format ? raw : value);
  }

  diag::Span span(size_t b, size_t e) const {
    return {file_,
            static_cast<uint32_t>(base_ + b),
            static_cast<uint32_t>(base_ + e)};
  }

  void push(Tok t, size_t b, size_t e, std::string text = {}) {
    Token tok;
    tok.kind = t;
    tok.span = span(b, e);
    tok.text = std::move(text);
    tok.column = static_cast<uint32_t>(b - line_begin_of(b));
    if (t != Tok::Indent && t != Tok::Dedent && t != Tok::Newline &&
        t != Tok::Eof) {
      tok.line_start = next_is_line_start_;
      next_is_line_start_ = false;
    }
    out_.push_back(std::move(tok));
  }

  // The start of the line holding byte [b]. Tokens come in source order,
  // so the scan resumes where the last one stopped: linear in the file (a
  // search back from each token was quadratic on a 100,000-term line).
  size_t line_begin_of(size_t b) {
    if (b < scanned_) {  // behind the scan (rare): search back
      size_t nl = b == 0 ? std::string_view::npos : src_.rfind('\n', b - 1);
      return nl == std::string_view::npos ? 0 : nl + 1;
    }
    for (; scanned_ < b; ++scanned_)
      if (src_[scanned_] == '\n') line_begin_ = scanned_ + 1;
    return line_begin_;
  }

  struct Open {
    Tok kind;
    diag::Span span;
  };

  std::string_view src_;
  uint32_t file_;
  uint32_t base_ = 0;
  diag::Diagnostics& diags_;
  size_t pos_ = 0;
  size_t scanned_ = 0, line_begin_ = 0;  // line_begin_of's scan
  bool at_line_start_ = true;
  bool next_is_line_start_ = false;
  std::vector<uint32_t> indents_;
  std::vector<Open> brackets_;
  Tokens out_;
  std::vector<diag::Span>* comments_;  // where to keep them, or nowhere
};

}  // namespace

const char* tok_spelling(Tok t) {
  return kSpellings[static_cast<int>(t)];
}

Tokens lex(const diag::SourceMap& sm, uint32_t file, diag::Diagnostics& diags) {
  return Lexer(sm.file(file).text, file, 0, diags).run();
}

Tokens lex(const diag::SourceMap& sm,
           uint32_t file,
           diag::Diagnostics& diags,
           std::vector<diag::Span>& comments) {
  return Lexer(sm.file(file).text, file, 0, diags, &comments).run();
}

Tokens lex_fragment(std::string_view text,
                    uint32_t file,
                    uint32_t base,
                    diag::Diagnostics& diags) {
  Tokens raw = Lexer(text, file, base, diags).run();
  Tokens out;
  out.reserve(raw.size());
  for (auto& t : raw)
    if (t.kind != Tok::Newline && t.kind != Tok::Indent &&
        t.kind != Tok::Dedent)
      out.push_back(std::move(t));
  return out;
}

}  // namespace ss::lex

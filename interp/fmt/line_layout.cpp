// Note [Breaking a long line]
// A logical line is laid out from its tokens alone, whatever the author's
// line breaks were, so the layout is a function of the tokens and their
// comments: formatting twice gives the same text. A line that fits in the
// width is written on one line. One that does not is broken only after a
// comma inside brackets, and each continuation starts under the first
// item after its bracket (the visual indent the examples use):
//
//     return logs(loss=cross_entropy(logits, batch.label),
//                 acc=mean(argmax(logits, over=C) == batch.label))
//
// The items of a bracket (what lies between its commas, with the comma) go
// on the current line while they fit, the last one with whatever must
// follow it up to the next comma, where a later bracket may break (the
// `)`, a `-> [b D]:`, `+ conv2d(h,`); an item
// that fits nowhere whole is entered and its own brackets broken the same
// way. A bracket is never broken right after it opens, so no comma is
// added or removed: the tokens stay the author's. A line with no brackets,
// or an item too long even alone, is left long, as black leaves it.
// Comments inside brackets end their line: one written after a token stays
// after it, one on a line of its own stays on a line of its own, at the
// bracket's column.
#include "interp/fmt/line_layout.h"

namespace ss::fmt {

namespace {

// Columns, counting a UTF-8 character once.
int columns(std::string_view s) {
  int n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

class Layout {
 public:
  Layout(const std::vector<LineToken>& t, int width, std::string& out)
      : t_(t), width_(width), out_(out), match_(t.size(), t.size()) {
    std::vector<size_t> open;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k].opens) open.push_back(k);
      if (t[k].closes && !open.empty()) {
        match_[open.back()] = k;
        open.pop_back();
      }
    }
  }

  void run(int indent) {
    out_.append(static_cast<size_t>(indent), ' ');
    col_ = indent;
    cont_.assign(1, indent + 4);
    fresh_ = true;
    range(0, t_.size());
    out_ += '\n';
  }

 private:
  void newline_to(int column) {
    while (!out_.empty() && out_.back() == ' ') out_.pop_back();
    out_ += '\n';
    out_.append(static_cast<size_t>(column), ' ');
    col_ = column;
    fresh_ = true;
  }

  void put(size_t k) {
    const LineToken& x = t_[k];
    if (!x.comments_before.empty()) {
      if (!fresh_) newline_to(cont_.back());
      for (std::string_view c : x.comments_before) {
        out_ += c;
        newline_to(cont_.back());
      }
    }
    if (!fresh_ && x.space_before) {
      out_ += ' ';
      ++col_;
    }
    out_ += x.text;
    col_ += columns(x.text);
    fresh_ = false;
    if (x.opens) cont_.push_back(col_);
    if (x.closes && cont_.size() > 1) cont_.pop_back();
    if (!x.comment_after.empty()) {
      out_ += "  ";
      out_ += x.comment_after;
      if (k + 1 < t_.size()) newline_to(cont_.back());
    }
  }

  // Tokens [i, j), whose brackets all close inside, each bracket's items
  // broken where they do not fit.
  void range(size_t i, size_t j) {
    for (size_t k = i; k < j;) {
      put(k);
      if (t_[k].opens && match_[k] < j) {
        contents(k + 1, match_[k]);
        put(match_[k]);
        k = match_[k] + 1;
      } else {
        ++k;
      }
    }
  }

  void flat(size_t i, size_t j) {
    for (size_t k = i; k < j; ++k) put(k);
  }

  int width_of(size_t i, size_t j, bool first_space) const {
    int w = 0;
    for (size_t k = i; k < j; ++k) {
      if ((k > i || first_space) && t_[k].space_before) ++w;
      w += columns(t_[k].text);
    }
    return w;
  }

  // What must follow the close bracket [c] on its line: up to the next
  // comma, where a later bracket can break (black's right-hand split), or
  // the line's end.
  int tail_width(size_t c) const {
    int w = 0;
    for (size_t k = c; k < t_.size(); ++k) {
      if (k > c && t_[k].space_before) ++w;
      w += columns(t_[k].text);
      if (k > c && t_[k].comma) break;
    }
    return w;
  }

  // The items between an open bracket and its close [c].
  void contents(size_t a, size_t c) {
    std::vector<std::pair<size_t, size_t>> items;
    int depth = 0;
    size_t start = a;
    for (size_t k = a; k < c; ++k) {
      if (t_[k].opens) ++depth;
      if (t_[k].closes) --depth;
      if (t_[k].comma && depth == 0) {
        items.emplace_back(start, k + 1);
        start = k + 1;
      }
    }
    if (start < c) items.emplace_back(start, c);
    for (size_t n = 0; n < items.size(); ++n) {
      auto [s, e] = items[n];
      const int tail = n + 1 == items.size() ? tail_width(c) : 0;
      if (n > 0 && !fresh_ && col_ + width_of(s, e, true) + tail > width_)
        newline_to(cont_.back());
      if (col_ + width_of(s, e, !fresh_) + tail <= width_)
        flat(s, e);
      else
        range(s, e);
    }
  }

  const std::vector<LineToken>& t_;
  int width_;
  std::string& out_;
  std::vector<size_t> match_;  // an open bracket's close (size(): none)
  std::vector<int> cont_;      // each open bracket's continuation column
  int col_ = 0;
  bool fresh_ = true;  // nothing written yet on this output line
};

}  // namespace

void lay_out_line(const std::vector<LineToken>& line,
                  int indent,
                  int width,
                  std::string& out) {
  Layout(line, width, out).run(indent);
}

}  // namespace ss::fmt

#pragma once
// One logical line laid out within the width (Note [Breaking a long line]
// in line_layout.cpp).

#include <string>
#include <string_view>
#include <vector>

namespace ss::fmt {

struct LineToken {
  std::string_view text;  // as written
  bool space_before = false;
  bool opens = false;   // ( [ {
  bool closes = false;  // ) ] }
  bool comma = false;
  /// Comments on lines of their own just before this token (inside
  /// brackets), and the comment written after it on its line.
  std::vector<std::string_view> comments_before;
  std::string_view comment_after;
};

/// Appends [line] (one logical line, at least one token) to [out] at
/// column [indent], ending in a newline.
void lay_out_line(const std::vector<LineToken>& line,
                  int indent,
                  int width,
                  std::string& out);

}  // namespace ss::fmt

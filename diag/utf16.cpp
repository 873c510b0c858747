#include "diag/utf16.h"

namespace ss::diag {

namespace {

// The length of the valid UTF-8 sequence starting at [s][i], or 1 for a
// byte that starts none (Note [UTF-16 columns]).
uint32_t sequence_length(std::string_view s, size_t i) {
  auto b = static_cast<unsigned char>(s[i]);
  uint32_t n = b < 0x80           ? 1
               : (b >> 5) == 0x6  ? 2
               : (b >> 4) == 0xE  ? 3
               : (b >> 3) == 0x1E ? 4
                                  : 0;
  if (n <= 1 || i + n > s.size()) return 1;
  for (uint32_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return 1;
  return n;
}

}  // namespace

uint32_t utf16_length(std::string_view bytes) {
  uint32_t units = 0;
  for (size_t i = 0; i < bytes.size();) {
    uint32_t n = sequence_length(bytes, i);
    units += n == 4 ? 2 : 1;
    i += n;
  }
  return units;
}

uint32_t byte_column(std::string_view line, uint32_t units) {
  uint32_t seen = 0;
  size_t i = 0;
  while (i < line.size()) {
    uint32_t n = sequence_length(line, i);
    uint32_t w = n == 4 ? 2 : 1;
    if (seen + w > units) break;
    seen += w;
    i += n;
  }
  return static_cast<uint32_t>(i);
}

}  // namespace ss::diag

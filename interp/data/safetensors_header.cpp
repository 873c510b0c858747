// The safetensors header reader (Note [Hostile headers] in
// safetensors_header.h): a one-pass parser over the header's text for the
// format's shape, with JSON's string and number grammar.
#include "interp/data/safetensors_header.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <unordered_set>

#include "interp/data/safetensors.h"

namespace ss::data {

namespace {

using types::DType;

struct DtypeName {
  DType dtype;
  const char* name;
};
constexpr DtypeName kDtypes[] = {
    {DType::F32, "F32"},
    {DType::F64, "F64"},
    {DType::BF16, "BF16"},
    {DType::F16, "F16"},
    {DType::I32, "I32"},
    {DType::I64, "I64"},
    {DType::Bool, "BOOL"},
};

std::string quote(const std::string& s) {
  return "'" + s + "'";
}

[[noreturn]] void invalid(const std::string& path, const std::string& problem) {
  throw SafetensorsError(quote(path) +
                         " is not a valid safetensors file: " + problem);
}

class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path)
      : t_(text), path_(path) {}

  [[noreturn]] void bad(const std::string& problem) const {
    invalid(path_, problem);
  }
  [[noreturn]] void not_json(const std::string& what) const {
    bad("the header is not JSON (" + what + " at byte " + std::to_string(i_) +
        ")");
  }

  void parse(SafetensorsHeader& out) {
    ws();
    if (!accept('{')) {
      skip_value(0);  // still JSON?
      ws();
      if (i_ != t_.size()) not_json("text after the value");
      bad("the header is not a JSON object");
    }
    std::unordered_set<std::string> names;
    bool metadata = false;
    ws();
    if (!accept('}')) {
      for (;;) {
        ws();
        std::string key = str();
        ws();
        expect(':');
        ws();
        if (key == "__metadata__") {
          if (metadata) bad("it has two __metadata__ objects");
          metadata = true;
          read_metadata(out.metadata);
        } else {
          if (!names.insert(key).second)
            bad("tensor " + quote(key) + " appears twice");
          out.entries.push_back(entry(key, out.data_size));
        }
        ws();
        if (accept(',')) continue;
        expect('}');
        break;
      }
    }
    ws();
    if (i_ != t_.size()) not_json("text after the value");
  }

 private:
  // ---- JSON's lexical grammar

  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' ||
                              t_[i_] == '\t' || t_[i_] == '\r'))
      ++i_;
  }
  bool at(char c) const { return i_ < t_.size() && t_[i_] == c; }
  bool accept(char c) {
    if (!at(c)) return false;
    ++i_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) {
      if (i_ >= t_.size()) not_json("an unexpected end");
      not_json(std::string("expected '") + c + "'");
    }
  }

  static void put_utf8(std::string& o, uint32_t c) {
    if (c < 0x80) {
      o += static_cast<char>(c);
    } else if (c < 0x800) {
      o += static_cast<char>(0xC0 | (c >> 6));
      o += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      o += static_cast<char>(0xE0 | (c >> 12));
      o += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      o += static_cast<char>(0xF0 | (c >> 18));
      o += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      o += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (c & 0x3F));
    }
  }

  uint32_t hex4() {
    if (t_.size() - i_ < 4) not_json("a short \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = t_[i_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= c - '0';
      else if (c >= 'a' && c <= 'f')
        v |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        v |= c - 'A' + 10;
      else
        not_json("a bad \\u escape");
    }
    return v;
  }

  std::string str() {
    if (!accept('"')) not_json("expected a string");
    std::string o;
    for (;;) {
      if (i_ >= t_.size()) not_json("an unterminated string");
      char c = t_[i_++];
      if (c == '"') return o;
      if (static_cast<unsigned char>(c) < 0x20)
        not_json("a control character in a string");
      if (c != '\\') {
        o += c;
        continue;
      }
      if (i_ >= t_.size()) not_json("an unterminated string");
      char e = t_[i_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          o += e;
          break;
        case 'b':
          o += '\b';
          break;
        case 'f':
          o += '\f';
          break;
        case 'n':
          o += '\n';
          break;
        case 'r':
          o += '\r';
          break;
        case 't':
          o += '\t';
          break;
        case 'u': {
          uint32_t c1 = hex4();
          if (c1 >= 0xD800 && c1 < 0xDC00) {
            if (t_.size() - i_ < 6 || t_[i_] != '\\' || t_[i_ + 1] != 'u')
              not_json("an unpaired surrogate");
            i_ += 2;
            uint32_t c2 = hex4();
            if (c2 < 0xDC00 || c2 >= 0xE000) not_json("an unpaired surrogate");
            c1 = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
          } else if (c1 >= 0xDC00 && c1 < 0xE000) {
            not_json("an unpaired surrogate");
          }
          put_utf8(o, c1);
          break;
        }
        default:
          not_json("a bad escape");
      }
    }
  }

  // A number's literal text, checked against JSON's grammar.
  std::string number() {
    size_t j = i_;
    if (j < t_.size() && t_[j] == '-') ++j;
    auto digits = [&] {
      size_t d0 = j;
      while (j < t_.size() && t_[j] >= '0' && t_[j] <= '9') ++j;
      if (j == d0) not_json("a bad number");
    };
    digits();
    if (j < t_.size() && t_[j] == '.') {
      ++j;
      digits();
    }
    if (j < t_.size() && (t_[j] == 'e' || t_[j] == 'E')) {
      ++j;
      if (j < t_.size() && (t_[j] == '+' || t_[j] == '-')) ++j;
      digits();
    }
    std::string s = t_.substr(i_, j - i_);
    i_ = j;
    return s;
  }

  bool lit(const char* w) {
    size_t n = std::strlen(w);
    if (t_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }

  // Any JSON value, read and dropped without building it; nesting past
  // kMaxHeaderDepth is refused, so the parser never recurses deeper.
  void skip_value(int depth) {
    if (depth > kMaxHeaderDepth)
      not_json("nesting over " + std::to_string(kMaxHeaderDepth) + " deep");
    ws();
    if (i_ >= t_.size()) not_json("an unexpected end");
    char c = t_[i_];
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++i_;
      ws();
      if (accept(close)) return;
      for (;;) {
        ws();
        if (c == '{') {
          str();
          ws();
          expect(':');
        }
        skip_value(depth + 1);
        ws();
        if (accept(',')) continue;
        expect(close);
        return;
      }
    }
    if (c == '"') {
      str();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number();
    } else if (!lit("true") && !lit("false") && !lit("null")) {
      not_json("an unexpected character");
    }
  }

  // ---- the format

  void read_metadata(std::map<std::string, std::string>& out) {
    if (!accept('{')) {
      skip_value(1);
      bad("__metadata__ is not a JSON object");
    }
    ws();
    if (accept('}')) return;
    for (;;) {
      ws();
      std::string k = str();
      ws();
      expect(':');
      ws();
      if (!at('"')) {
        skip_value(2);
        bad("__metadata__ entry " + quote(k) + " is not a string");
      }
      if (!out.emplace(k, str()).second)
        bad("__metadata__ entry " + quote(k) + " appears twice");
      ws();
      if (accept(',')) continue;
      expect('}');
      return;
    }
  }

  // A non-negative integer up to 2^64 - 1; the message names [what].
  uint64_t uint_value(const std::string& what) {
    ws();
    if (!(at('-') || (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9'))) {
      size_t from = i_;
      skip_value(3);
      bad(what + " is not a non-negative integer (" +
          t_.substr(from, i_ - from) + ")");
    }
    std::string s = number();
    if (s[0] == '-' && s.find_first_of(".eE") == std::string::npos)
      bad(what + " is negative (" + s + ")");
    uint64_t x = 0;
    for (char c : s) {
      if (c < '0' || c > '9' || __builtin_mul_overflow(x, 10, &x) ||
          __builtin_add_overflow(x, uint64_t(c - '0'), &x))
        bad(what + " is not a non-negative integer (" + s + ")");
    }
    return x;
  }

  // `[u, ...]`, each a non-negative integer; the texts go to [texts].
  std::vector<uint64_t> uint_array(const std::string& what, std::string& text) {
    size_t from = i_;
    if (!accept('[')) {
      skip_value(2);
      return {};
    }
    std::vector<uint64_t> out;
    ws();
    if (!accept(']')) {
      for (;;) {
        out.push_back(uint_value(what));
        ws();
        if (accept(',')) continue;
        expect(']');
        break;
      }
    }
    text = t_.substr(from, i_ - from);
    return out;
  }

  SafetensorsEntry entry(const std::string& name, uint64_t data_size) {
    std::string t = "tensor " + quote(name);
    if (!accept('{')) {
      skip_value(1);
      bad(t + " is not a JSON object");
    }
    std::optional<std::string> dtype;
    std::optional<std::vector<uint64_t>> shape, offsets;
    std::string shape_text, offsets_text;
    ws();
    if (!accept('}')) {
      for (;;) {
        ws();
        std::string k = str();
        ws();
        expect(':');
        ws();
        if (k == "dtype" && at('"')) {
          dtype = str();
        } else if (k == "shape" && at('[')) {
          shape = uint_array(t + "'s shape entry", shape_text);
        } else if (k == "data_offsets" && at('[')) {
          offsets = uint_array(t + "'s data_offsets", offsets_text);
        } else {
          skip_value(2);  // an unknown key, or a known one of another type
        }
        ws();
        if (accept(',')) continue;
        expect('}');
        break;
      }
    }
    if (!dtype) bad(t + " has no \"dtype\" string");
    if (!shape) bad(t + " has no \"shape\" array");
    if (!offsets || offsets->size() != 2)
      bad(t + " has no \"data_offsets\" pair");
    SafetensorsEntry e;
    e.name = name;
    bool known = false;
    for (const DtypeName& d : kDtypes)
      if (*dtype == d.name) {
        e.dtype = d.dtype;
        known = true;
      }
    if (!known)
      bad(t + " has dtype " + *dtype +
          ", which ShapeScript does not read (F32 F64 BF16 F16 I32 I64 "
          "BOOL)");
    // The element count, and the product of the nonzero dims (so that no
    // axis anywhere is absurdly large even when another is 0).
    uint64_t count = 1, nonzero = 1;
    constexpr auto kMax =
        static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    for (uint64_t x : *shape) {
      if (x > kMax ||
          __builtin_mul_overflow(nonzero, x == 0 ? 1 : x, &nonzero) ||
          nonzero > kMax)
        bad(t + "'s shape " + shape_text + " overflows");
      count *= x;
      e.shape.push_back(static_cast<int64_t>(x));
    }
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(
            count, uint64_t(types::dtype_size(e.dtype)), &bytes))
      bad(t + "'s shape " + shape_text + " overflows");
    e.begin = (*offsets)[0];
    e.end = (*offsets)[1];
    if (e.begin > e.end)
      bad(t + "'s data_offsets " + offsets_text + " are reversed");
    if (e.end > data_size)
      bad(t + "'s data_offsets " + offsets_text + " run past the data (" +
          std::to_string(data_size) + " bytes; truncated?)");
    if (e.end - e.begin != bytes)
      bad(t + " is " + *dtype + " " + shape_text + ", " +
          std::to_string(bytes) + " bytes, but its data_offsets " +
          offsets_text + " span " + std::to_string(e.end - e.begin));
    return e;
  }

  const std::string& t_;
  const std::string& path_;
  size_t i_ = 0;
};

}  // namespace

const char* safetensors_dtype_name(DType d) {
  for (const DtypeName& x : kDtypes)
    if (x.dtype == d) return x.name;
  return "?";
}

SafetensorsHeader read_safetensors_header(const std::string& path,
                                          uint64_t size,
                                          const ReadAt& read_at) {
  auto bad = [&](const std::string& problem) { invalid(path, problem); };
  if (size < 8)
    bad("it has " + std::to_string(size) +
        " bytes, fewer than the 8 of the header length (truncated?)");
  unsigned char lenbuf[8];
  read_at(0, lenbuf, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | lenbuf[i];
  if (n > size - 8)
    bad("the header length is " + std::to_string(n) + " bytes, but only " +
        std::to_string(size - 8) + " follow it (truncated?)");
  if (n > kMaxHeaderBytes)
    bad("the header length is " + std::to_string(n) +
        " bytes, over the limit of " + std::to_string(kMaxHeaderBytes));
  if (n < 2) bad("the header is " + std::to_string(n) + " bytes, not JSON");
  std::string text(n, '\0');
  read_at(8, text.data(), n);
  SafetensorsHeader h;
  h.data_start = 8 + n;
  h.data_size = size - 8 - n;
  HeaderParser(text, path).parse(h);
  // Two tensors over the same bytes (issue 32 item 14: it was loaded, so
  // one write through either would change both): refused, as the format's
  // reference reader refuses offsets that are not one after another.
  std::vector<const SafetensorsEntry*> by_start;
  for (const SafetensorsEntry& e : h.entries)
    if (e.end > e.begin) by_start.push_back(&e);
  std::sort(by_start.begin(), by_start.end(), [](auto* a, auto* b) {
    return a->begin < b->begin;
  });
  for (size_t i = 1; i < by_start.size(); ++i)
    if (by_start[i]->begin < by_start[i - 1]->end)
      bad("tensors '" + by_start[i - 1]->name + "' and '" + by_start[i]->name +
          "' overlap: their data_offsets [" +
          std::to_string(by_start[i - 1]->begin) + ", " +
          std::to_string(by_start[i - 1]->end) + "] and [" +
          std::to_string(by_start[i]->begin) + ", " +
          std::to_string(by_start[i]->end) + "] share bytes");
  return h;
}

}  // namespace ss::data

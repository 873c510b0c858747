// .csv: a header row naming the columns, one row an item (parse_csv for
// text in memory, load_csv for a file, read a chunk at a time).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"
#include "interp/data/loaders_impl.h"

namespace ss::data {

using types::DType;
using namespace detail;

namespace {

// A cell as an error quotes it: a control byte as \xNN, as Python's repr
// shows one, so that a NUL ("0.1\0") does not end the message where a
// terminal prints it ("found '0.1" lost its column).
std::string shown(const std::string& cell) {
  std::string out;
  for (unsigned char c : cell) {
    if (c < 0x20 || c == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Note [A CSV is read a cell at a time]
// A CSV's memory is what its fields declare, never what the file holds:
// - the text is read 1 MiB at a time (a file is never read whole);
// - the header's cells are matched, one at a time, against the columns
//   the record's fields name, and only those are kept: a header of
//   millions of columns took a string and a map node each before (issue
//   16), now nothing (a repeated name is an error only among the columns
//   a field reads);
// - a data line's cells are counted as they pass, and only the cells of
//   those columns are kept, each to kCellMax bytes: a line of 20M cells is
//   refused at its count (Note [A CSV line holds the header's cells]).
constexpr size_t kChunk = size_t{1} << 20;
constexpr size_t kCellMax = 4096;

// Note [A CSV line holds the header's cells]
// The header declares the columns, so a data line with another number of
// cells is refused when the line ends, before any of its values is
// parsed, whatever it holds (issue 16: a line of 20M cells took 1.1 GB
// before it was refused).

// The text, a chunk at a time: all of a string, or a file's next 1 MiB.
class CsvText {
 public:
  explicit CsvText(std::string_view all) : chunk_(all) {}
  explicit CsvText(const std::string& path)
      : path_(path), size_(regular_file_size(path)) {}
  // The next byte, or -1 at the end.
  int get() {
    if (at_ == chunk_.size() && !refill()) return -1;
    return static_cast<unsigned char>(chunk_[at_++]);
  }

 private:
  bool refill() {
    if (path_.empty() || read_ == size_) return false;
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, size_ - read_));
    buf_ = read_range(path_, read_, n);
    read_ += n;
    chunk_ = buf_;
    at_ = 0;
    return true;
  }
  std::string path_;
  uint64_t size_ = 0, read_ = 0;
  std::string buf_;
  std::string_view chunk_;
  size_t at_ = 0;
};

bool is_space(int c) {
  return c == ' ' || c == '\t' || c == '\r';
}

// One line's cells, each without the whitespace around it and then
// without one pair of quotes around what is left, and cut to kCellMax
// bytes (`cut` says when more was dropped). As Python's csv module reads
// them (issue 32 item 14): a comma inside quotes is the cell's (`"1,5"` is
// one cell); a line ends at \n, \r\n or a lone \r (old Mac files); a
// UTF-8 byte order mark at the start of the text is not the first cell's.
class CsvLines {
 public:
  explicit CsvLines(CsvText& t) : t_(t) {}
  // Reads a line, calling on_cell(i, text, cut) for its cells in order;
  // false at the end of the text. [blank]: the line held only whitespace
  // (one empty cell).
  template <class F>
  bool next(F&& on_cell, size_t& ncells, bool& blank) {
    int c = t_.get();
    if (after_cr_ && c == '\n') c = t_.get();  // \r\n is one line end
    after_cr_ = false;
    if (first_) {
      first_ = false;
      if (c == 0xEF && t_.get() == 0xBB && t_.get() == 0xBF) c = t_.get();
    }
    if (c < 0) return false;
    ncells = 0;
    blank = true;
    cell_.clear();
    bool cut = false, quoted = false;
    auto finish = [&] {
      while (!cell_.empty() && is_space(cell_.back())) cell_.pop_back();
      std::string_view v = cell_;
      if (!cut && v.size() >= 2 && v.front() == '"' && v.back() == '"')
        v = v.substr(1, v.size() - 2);
      on_cell(ncells++, v, cut);
      cell_.clear();
      cut = false;
      quoted = false;
    };
    for (;; c = t_.get()) {
      if (c < 0 || c == '\n') break;
      if (c == '\r') {
        after_cr_ = true;
        break;
      }
      if (c == ',' && !quoted) {
        blank = false;
        finish();
        continue;
      }
      bool space = is_space(c);
      if (!space) blank = false;
      if (space && cell_.empty()) continue;  // leading whitespace
      if (c == '"' && (cell_.empty() || quoted)) quoted = !quoted;
      if (cell_.size() < kCellMax)
        cell_.push_back(static_cast<char>(c));
      else if (!space)
        cut = true;
    }
    finish();
    return true;
  }

 private:
  CsvText& t_;
  std::string cell_;
  bool first_ = true;
  bool after_cr_ = false;
};

// A field's columns: one slot per value of an item, in C order.
struct Plan {
  const types::FieldInfo* f;
  std::vector<size_t> slots;
  ops::Shape shape;
  bool size_variable = false;
  std::vector<double> fvals;
  std::vector<int64_t> ivals;
};

// The kept cells of one line, by slot.
struct Row {
  std::string text;
  std::vector<size_t> at, len;
  std::vector<char> cut;
  explicit Row(size_t slots) : at(slots), len(slots), cut(slots) {}
  void clear() { text.clear(); }
  void keep(size_t slot, std::string_view v, bool was_cut) {
    at[slot] = text.size();
    len[slot] = v.size();
    cut[slot] = was_cut;
    text.append(v);
  }
  std::string_view cell(size_t slot) const {
    return std::string_view(text).substr(at[slot], len[slot]);
  }
};

std::map<std::string, RawArray> read_csv(
    CsvText& text,
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames,
    const std::string& name) {
  // The columns the fields read, before the header is looked at.
  std::vector<Plan> plans;
  std::vector<std::string> slot_name;
  // A column two fields read (a rename) has two slots.
  std::unordered_map<std::string, std::vector<size_t>> slots_of;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    Plan pl{&f, {}, field_shape(f, dims), false, {}, {}};
    const std::string& fname = file_name_of(f, renames);
    pl.size_variable = std::any_of(
        pl.shape.begin(), pl.shape.end(), [](int64_t d) { return d < 0; });
    int64_t k = pl.size_variable ? 0 : ops::numel_of(pl.shape);
    for (int64_t j = 0; j < (pl.shape.empty() ? 1 : k); ++j) {
      std::string cn =
          pl.shape.empty() ? fname : fname + "_" + std::to_string(j);
      pl.slots.push_back(slot_name.size());
      slots_of[cn].push_back(slot_name.size());
      slot_name.push_back(std::move(cn));
    }
    plans.push_back(std::move(pl));
  }
  const size_t nslots = slot_name.size();
  constexpr size_t kNone = ~size_t{0};
  std::vector<size_t> col_of(nslots, kNone);

  CsvLines lines(text);
  size_t header_cells = 0, first_empty = kNone;
  bool blank = false;
  auto header_cell = [&](size_t i, std::string_view v, bool cut) {
    if (v.empty() && !cut && first_empty == kNone) first_empty = i;
    if (cut || first_empty != kNone)
      return;  // longer than any column a field names
    auto it = slots_of.find(std::string(v));
    if (it == slots_of.end()) return;
    if (col_of[it->second.front()] != kNone)
      io_error(name, "header names column `" + std::string(v) + "` twice");
    for (size_t s : it->second) col_of[s] = i;
  };
  if (!lines.next(header_cell, header_cells, blank))
    io_error(name, "empty CSV file (no header row)");
  if (blank) {  // a header of one empty cell, or only whitespace left
    size_t n = 0;
    for (bool more = true; more && blank;)
      more = lines.next([](size_t, std::string_view, bool) {}, n, blank);
    if (blank) io_error(name, "empty CSV file (no header row)");
    io_error(name, "header cell 1 is empty");
  }
  if (first_empty != kNone)
    io_error(name,
             "header cell " + std::to_string(first_empty + 1) + " is empty");
  for (const Plan& pl : plans) {
    if (pl.size_variable)
      throw DataError("ShapeError",
                      name + ": field `" + pl.f->name +
                          "` has a size variable; CSV files hold fields of "
                          "static shape only");
    for (size_t j = 0; j < pl.slots.size(); ++j) {
      if (col_of[pl.slots[j]] != kNone) continue;
      const std::string& cn = slot_name[pl.slots[j]];
      if (pl.shape.empty())
        throw DataError("ShapeError",
                        name + " has no column `" + cn + "` for field `" +
                            pl.f->name + "`");
      const std::string& fname = file_name_of(*pl.f, renames);
      size_t k = pl.slots.size();
      throw DataError("ShapeError",
                      name + " has no column `" + cn + "` for field `" +
                          pl.f->name + "` (a field of " + std::to_string(k) +
                          " values is the columns " + fname + "_0.." + fname +
                          "_" + std::to_string(k - 1) + ")");
    }
  }
  // The slots by column, so that a line's cells find theirs in one pass.
  std::vector<std::pair<size_t, size_t>> by_col;
  for (size_t s = 0; s < nslots; ++s) by_col.emplace_back(col_of[s], s);
  std::sort(by_col.begin(), by_col.end());

  int64_t rows = 0;
  std::string cell;  // one cell, NUL-terminated for strtod/strtoll
  auto add_row = [&](size_t ncells, const Row& row) {
    int64_t item = rows++;
    if (ncells != header_cells)
      io_error(name,
               "line " + std::to_string(item + 2) + " has " +
                   std::to_string(ncells) + " cells, the header has " +
                   std::to_string(header_cells));
    for (Plan& pl : plans) {
      for (size_t s : pl.slots) {
        cell.assign(row.cell(s));
        DType d = pl.f->type.dtype;
        std::string want = types::is_float(d) ? "a number"
                           : d == DType::Bool
                               ? "a bool (true, false, 1, 0)"
                               : std::string("an ") + types::dtype_name(d);
        auto bad = [&](const std::string& what) {
          throw DataError("ShapeError",
                          "item " + std::to_string(item) + " of " + name +
                              " (line " + std::to_string(item + 2) +
                              "), field `" + pl.f->name + "`: expected " +
                              what + ", found '" + shown(cell) +
                              (row.cut[s] ? "...'" : "'") + " in column `" +
                              slot_name[s] + "`");
        };
        if (cell.empty()) bad("a value");
        if (row.cut[s]) bad(want);
        const char* b = cell.c_str();
        char* e = nullptr;
        // The whole cell, as Python's float() and int() read it: a NUL
        // inside ("0.1\0") is not its end, and a hex float (0x1p-2, which
        // strtod takes) is no decimal number.
        const char* end = b + cell.size();
        if (types::is_float(d)) {
          if (cell.find_first_of("xX") != std::string::npos) bad(want);
          errno = 0;
          double v = std::strtod(b, &e);
          if (e != end) bad(want);
          pl.fvals.push_back(v);
        } else if (d == DType::Bool) {
          if (cell == "true" || cell == "True" || cell == "1")
            pl.ivals.push_back(1);
          else if (cell == "false" || cell == "False" || cell == "0")
            pl.ivals.push_back(0);
          else
            bad(want);
        } else {
          errno = 0;
          long long v = std::strtoll(b, &e, 10);
          if (e != end || errno == ERANGE) bad(want);
          pl.ivals.push_back(v);
        }
      }
    }
  };
  // A blank line is one empty cell. Blank lines at the end are no lines;
  // others are rows (which fail: an empty cell, or too few), so they wait
  // until a line with something in it comes.
  Row row(nslots), blank_row(nslots);
  for (size_t i = 0; i < by_col.size() && by_col[i].first == 0; ++i)
    blank_row.keep(by_col[i].second, "", false);
  int64_t blanks = 0;
  size_t next = 0;  // into by_col
  auto data_cell = [&](size_t i, std::string_view v, bool cut) {
    while (next < by_col.size() && by_col[next].first == i)
      row.keep(by_col[next++].second, v, cut);
  };
  for (size_t ncells = 0;;) {
    row.clear();
    next = 0;
    if (!lines.next(data_cell, ncells, blank)) break;
    if (blank) {
      ++blanks;
      continue;
    }
    for (; blanks > 0; --blanks) add_row(1, blank_row);
    add_row(ncells, row);
  }

  std::map<std::string, RawArray> out;
  for (Plan& pl : plans) {
    RawArray a;
    a.shape = pl.shape;
    a.shape.insert(a.shape.begin(), rows);
    DType d = pl.f->type.dtype;
    if (types::is_float(d)) {
      a.type = RawType::F64;
      a.bytes = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(pl.fvals.data()), pl.fvals.size() * 8);
    } else if (d == DType::Bool) {
      a.type = RawType::Bool;
      std::string b(pl.ivals.size(), '\0');
      for (size_t i = 0; i < pl.ivals.size(); ++i)
        b[i] = static_cast<char>(pl.ivals[i]);
      a.bytes = std::make_shared<const std::string>(std::move(b));
    } else {
      a.type = RawType::I64;
      a.bytes = std::make_shared<const std::string>(
          reinterpret_cast<const char*>(pl.ivals.data()), pl.ivals.size() * 8);
    }
    out[pl.f->name] = dataset_detail::as_field_dtype(std::move(a), *pl.f, name);
  }
  return out;
}

}  // namespace

std::map<std::string, RawArray> parse_csv(
    const std::string& text,
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames,
    const std::string& name) {
  CsvText t{std::string_view(text)};
  return read_csv(t, r, dims, renames, name);
}

std::map<std::string, RawArray> load_csv(
    const std::string& path,
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames) {
  CsvText t{path};
  return read_csv(t, r, dims, renames, path);
}

}  // namespace ss::data

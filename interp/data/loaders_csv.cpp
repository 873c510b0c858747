// .csv: a header row naming the columns, one row an item (parse_csv).
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "interp/data/dataset.h"
#include "interp/data/dataset_impl.h"
#include "interp/data/loaders_impl.h"

namespace ss::eval {

using types::DType;
using namespace detail;

namespace {

// ------------------------------------------------------------------ csv

std::string_view trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && (s[a] == ' ' || s[a] == '\t' || s[a] == '\r')) ++a;
  while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t' || s[b - 1] == '\r'))
    --b;
  std::string_view t = s.substr(a, b - a);
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"')
    t = t.substr(1, t.size() - 2);
  return t;
}

// [line]'s cells into [out] (views into the line, reused across lines).
void split_cells(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  for (size_t start = 0;;) {
    size_t c = line.find(',', start);
    out.push_back(trim(line.substr(start, c == line.npos ? c : c - start)));
    if (c == line.npos) break;
    start = c + 1;
  }
}

// Note [A CSV line holds the header's cells]
// The header declares the columns, so a data line's cells are counted (its
// commas, no allocation) before any is split or stored: a line of 20M cells
// is refused at its count (issue 16: it took 1.1 GB first). The lines are
// views into the file's text, never copies.
struct Lines {
  std::string_view text;
  size_t at = 0;
  // The next line without its \r\n, or false at the end; trailing blank
  // lines are no lines.
  bool next(std::string_view& line) {
    if (at >= text.size()) return false;
    if (text.find_first_not_of(" \t\r\n", at) == text.npos) return false;
    size_t nl = text.find('\n', at);
    if (nl == text.npos) nl = text.size();
    line = text.substr(at, nl - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    at = nl + 1;
    return true;
  }
};

}  // namespace

std::map<std::string, RawArray> parse_csv(
    const std::string& text,
    const types::RecordInfo& r,
    const std::map<std::string, int64_t>& dims,
    const std::map<std::string, std::string>& renames,
    const std::string& name) {
  Lines lines{text};
  std::string_view header_line;
  if (!lines.next(header_line))
    io_error(name, "empty CSV file (no header row)");
  std::vector<std::string_view> cells;
  split_cells(header_line, cells);
  std::vector<std::string> header(cells.begin(), cells.end());
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i].empty())
      io_error(name, "header cell " + std::to_string(i + 1) + " is empty");
    if (!col.emplace(header[i], i).second)
      io_error(name, "header names column `" + header[i] + "` twice");
  }
  struct Plan {
    const types::FieldInfo* f;
    std::vector<size_t> cols;
    ops::Shape shape;
    std::vector<double> fvals;
    std::vector<int64_t> ivals;
  };
  std::vector<Plan> plans;
  for (const types::FieldInfo& f : r.fields) {
    if (!f.type.is_tensor()) continue;
    ops::Shape fshape = field_shape(f, dims);
    const std::string& fname = file_name_of(f, renames);
    for (int64_t d : fshape)
      if (d < 0)
        throw DataError("ShapeError",
                        name + ": field `" + f.name +
                            "` has a size variable; CSV files hold fields of "
                            "static shape only");
    Plan pl{&f, {}, fshape, {}, {}};
    int64_t k = ops::numel_of(fshape);
    if (fshape.empty()) {
      auto it = col.find(fname);
      if (it == col.end())
        throw DataError(
            "ShapeError",
            name + " has no column `" + fname + "` for field `" + f.name + "`");
      pl.cols.push_back(it->second);
    } else {
      for (int64_t j = 0; j < k; ++j) {
        std::string cn = fname + "_" + std::to_string(j);
        auto it = col.find(cn);
        if (it == col.end())
          throw DataError("ShapeError",
                          name + " has no column `" + cn + "` for field `" +
                              f.name + "` (a field of " + std::to_string(k) +
                              " values is the columns " + fname + "_0.." +
                              fname + "_" + std::to_string(k - 1) + ")");
        pl.cols.push_back(it->second);
      }
    }
    plans.push_back(std::move(pl));
  }
  int64_t rows = 0;
  std::string cell;  // one cell, NUL-terminated for strtod/strtoll
  for (std::string_view line; lines.next(line); ++rows) {
    int64_t row = rows;
    size_t ncells = 1 + std::count(line.begin(), line.end(), ',');
    if (ncells != header.size())
      io_error(name,
               "line " + std::to_string(row + 2) + " has " +
                   std::to_string(ncells) + " cells, the header has " +
                   std::to_string(header.size()));
    split_cells(line, cells);
    for (Plan& pl : plans) {
      for (size_t c : pl.cols) {
        cell.assign(cells[c]);
        const char* b = cell.c_str();
        char* e = nullptr;
        auto bad = [&](const std::string& want) {
          throw DataError("ShapeError",
                          "item " + std::to_string(row) + " of " + name +
                              " (line " + std::to_string(row + 2) +
                              "), field `" + pl.f->name + "`: expected " +
                              want + ", found '" + cell + "' in column `" +
                              header[c] + "`");
        };
        if (cell.empty()) bad("a value");
        DType d = pl.f->type.dtype;
        if (types::is_float(d)) {
          errno = 0;
          double v = std::strtod(b, &e);
          if (*e) bad("a number");
          pl.fvals.push_back(v);
        } else if (d == DType::Bool) {
          if (cell == "true" || cell == "True" || cell == "1")
            pl.ivals.push_back(1);
          else if (cell == "false" || cell == "False" || cell == "0")
            pl.ivals.push_back(0);
          else
            bad("a bool (true, false, 1, 0)");
        } else {
          errno = 0;
          long long v = std::strtoll(b, &e, 10);
          if (*e || errno == ERANGE)
            bad(std::string("an ") + types::dtype_name(d));
          pl.ivals.push_back(v);
        }
      }
    }
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

}  // namespace ss::eval

// logs, print, and the sinks stdout(), csv(path), jsonl(path), tee(...).
#include "interp/builtins/output.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "interp/eval/device_hooks.h"
#include "interp/eval/format.h"
#include "interp/eval/runtime_table.h"

namespace ss::builtins {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

// A logged value as one number when it is 0-d.
bool scalar_of(const Value& v, double& out) {
  if (v.is_number()) {
    out = v.number();
    return true;
  }
  if (v.kind == VK::Tensor && v.t.rank() == 0) {
    out = v.t.item();
    return true;
  }
  return false;
}

// Note [JSON numbers]: a jsonl reader (Python's json, pandas) must get
// back exactly what was logged, typed as logged: an int tensor's elements
// as JSON integers, read from the int64 storage (a double would round
// above 2^53), bools as true/false, and floats as the shortest text that
// reads back to the same value of their own dtype (an f32 0.1 is "0.1",
// not its double's 0.10000000149011612). NaN and infinities use Python's
// spellings, which its json module reads back.
std::string json_float(double v, types::DType dt) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  std::to_chars_result r =
      dt == types::DType::F64
          ? std::to_chars(buf, buf + sizeof buf, v)
          : std::to_chars(buf, buf + sizeof buf, static_cast<float>(v));
  std::string out(buf, r.ptr);
  // "1" would read back as an int: a float stays a float ("1.0").
  if (out.find_first_of(".en") == std::string::npos) out += ".0";
  return out;
}

std::string json_element(const ops::Tensor& t, int64_t i) {
  return types::is_float(t.dtype()) ? json_float(t.at(i), t.dtype())
                                    : exact_element(t, i);
}

void json_tensor(const ops::Tensor& t,
                 size_t axis,
                 int64_t& at,
                 std::string& out) {
  if (axis == t.rank()) {
    out += json_element(t, at++);
    return;
  }
  out += "[";
  for (int64_t i = 0; i < t.shape()[axis]; ++i) {
    if (i) out += ", ";
    json_tensor(t, axis + 1, at, out);
  }
  out += "]";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += ch;
        }
    }
  }
  return out + "\"";
}

// A value as print shows it, on one line: library.md's stdout() writes
// one line per write, and a tensor's print form spans several (its type,
// then numpy's rows), which split a step's record. Each line break and the
// indent after it become one space: `v [2 2] f32 [[1 2] [3 4]]`.
std::string on_one_line(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\n') {
      out += text[i];
      continue;
    }
    while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
    out += ' ';
  }
  return out;
}

// Why a stream did not take what was flushed to it ("" when it did):
// "cannot write [what]: <the system's reason>". A full disk behind a sink,
// a checkpoint's log or `ss run p.ss > out` is an IOError at the write, as
// Python raises OSError there, where the lines were lost in silence (issue
// 32 item 1). The stream is cleared, so that a later write tries again and
// reports its own failure. The caller sets errno to 0 before its write.
std::string write_failure(std::ostream& s, const std::string& what) {
  if (s) return "";
  const int e = errno;
  s.clear();
  return "cannot write " + what +
         (e ? std::string(": ") + std::strerror(e) : std::string());
}

struct StdoutSink : SinkValue {
  explicit StdoutSink(std::ostream& o) : out(o) {}
  std::string write(const LogsValue& logs, int64_t step) override {
    std::string line = "step " + std::to_string(step);
    for (const auto& [name, v] : logs.fields) {
      double x;
      // A count or a flag reads as itself (`n 3`, `done true`); a float
      // to four decimals.
      const bool exact = v.kind == VK::Int || v.kind == VK::Bool ||
                         (v.kind == VK::Tensor && v.t.rank() == 0 &&
                          !types::is_float(v.t.dtype()));
      line += "  " + name + " " +
              (exact             ? json_value(v)
               : scalar_of(v, x) ? format_with_spec(Value::floating(x), ".4f")
                                 : on_one_line(format_value(v)));
    }
    errno = 0;
    out << line << std::endl;  // flushed: complete lines only
    return write_failure(out, "to standard output");
  }
  std::ostream& out;
};

// A file sink: its stream, and what its last flush said.
struct FileSink : SinkValue {
  std::ofstream file;
  std::string path;
  /// Flushes what was written: "" when the file took it, else why not.
  std::string flushed() {
    errno = 0;
    file.flush();
    return write_failure(file, "'" + path + "'");
  }
};

struct CsvSink : FileSink {
  std::vector<std::string> columns;
  std::string write(const LogsValue& logs, int64_t step) override {
    if (columns.empty()) {
      file << "step";
      for (const auto& [name, v] : logs.fields) {
        columns.push_back(name);
        file << "," << name;
      }
      file << "\n";
    }
    file << step;
    for (const std::string& col : columns) {
      file << ",";
      if (const Value* v = logs.find(col)) {
        double x;
        if (scalar_of(*v, x))
          file << json_value(*v);  // typed as logged (Note [JSON numbers])
        else
          file << json_string(json_value(*v));
      }
    }
    file << "\n";
    return flushed();
  }
};

struct JsonlSink : FileSink {
  std::string write(const LogsValue& logs, int64_t step) override {
    std::string line = "{\"step\": " + std::to_string(step);
    for (const auto& [name, v] : logs.fields)
      line += ", " + json_string(name) + ": " + json_value(v);
    file << line << "}\n";
    return flushed();
  }
};

struct TeeSink : SinkValue {
  std::vector<std::shared_ptr<Object>> sinks;
  std::string write(const LogsValue& logs, int64_t step) override {
    // Every sink gets the record; the first one that failed says so.
    std::string first;
    for (auto& s : sinks) {
      std::string e = static_cast<SinkValue*>(s.get())->write(logs, step);
      if (first.empty()) first = std::move(e);
    }
    return first;
  }
};

Value logs(BuiltinCall& c) {
  auto l = std::make_shared<LogsValue>();
  for (const auto& [name, v] : c.keywords) l->fields.push_back({name, v});
  // On several devices a batch-axis value here is this rank's share: mark
  // it, so the call's result carries the whole batch (devices.md item 6).
  if (placement_of(c.in).batch_share_start && c.call)
    for (const ast::Arg& a : c.call->args) {
      if (a.keyword.empty() || !a.value) continue;
      const check::ExprInfo* info = c.in.program().info(a.value.get());
      if (!info || !info->split || !c.frame.fn) continue;
      const std::vector<types::Axis>& shape = info->type.shape;
      for (size_t k = 0; k < shape.size(); ++k)
        if (shape[k].kind == types::Axis::Kind::Var &&
            c.frame.fn->batch_vars.count(shape[k].var)) {
          l->split_fields.push_back({a.keyword, static_cast<int>(k)});
          break;
        }
    }
  return Value::object(VK::Logs, l);
}

Value print(BuiltinCall& c) {
  std::string sep = " ", end = "\n";
  for (const auto& [k, v] : c.keywords) {
    if (k == "sep")
      sep = v.s;
    else if (k == "end")
      end = v.s;
    else
      c.fail("ValueError", "print takes sep= and end=, not " + k + "=");
  }
  std::string line;
  for (size_t i = 0; i < c.extras.size(); ++i) {
    const types::Type* st = nullptr;
    if (i < c.extra_exprs.size() && c.extra_exprs[i])
      st = &c.in.program().type_of(c.extra_exprs[i]);
    line += (i ? sep : "") + format_value(c.extras[i], st);
  }
  errno = 0;
  c.in.out() << line << end << std::flush;
  if (std::string e = write_failure(c.in.out(), "to standard output");
      !e.empty())
    c.fail("IOError", e);
  return Value::unit();
}

template <class S>
Value open_file_sink(BuiltinCall& c) {
  auto s = std::make_shared<S>();
  const std::string& path = c.arg(0).s;
  s->path = path;
  s->file.open(path, std::ios::out | std::ios::trunc);
  if (!s->file) c.fail("IOError", "cannot open '" + path + "' for writing");
  return Value::object(VK::Sink, s);
}

Value stdout_builtin(BuiltinCall& c) {
  return stdout_sink(c.in);
}

Value tee(BuiltinCall& c) {
  auto t = std::make_shared<TeeSink>();
  for (const Value& v : c.extras) t->sinks.push_back(v.obj);
  return Value::object(VK::Sink, t);
}

Value write(BuiltinCall& c) {
  auto* sink = c.arg(0).as<SinkValue>();
  const Value& r = c.arg(1);
  if (r.kind != VK::Logs) c.fail("ValueError", "write takes logs(...)");
  int64_t step = c.has(2) ? c.integer(2, 0) : sink->next_step;
  sink->next_step = step + 1;
  if (std::string why = sink->write(*r.as<LogsValue>(), step); !why.empty())
    c.fail("IOError", why);
  sink->last = std::static_pointer_cast<LogsValue>(r.obj);
  last_written().logs = sink->last;
  ++last_written().writes;
  return Value::unit();
}

}  // namespace

std::string json_value(const Value& v) {
  if (v.kind == VK::Int) return std::to_string(v.i);
  if (v.kind == VK::Bool) return v.b ? "true" : "false";
  if (v.kind == VK::Float) return json_float(v.f, types::DType::F64);
  if (v.kind == VK::Tensor) {
    std::string out;
    int64_t at = 0;
    json_tensor(v.t.to(ops::Device{}), 0, at, out);  // one copy off a GPU
    return out;
  }
  if (v.kind == VK::Str) return json_string(v.s);
  return json_string(format_value(v));
}

Value stdout_sink(Interpreter& in) {
  return Value::object(VK::Sink, std::make_shared<StdoutSink>(in.out()));
}

std::vector<RuntimeEntry> lib_output() {
  return {{"logs", logs},
          {"print", print},
          {"stdout", stdout_builtin},
          {"csv", open_file_sink<CsvSink>},
          {"jsonl", open_file_sink<JsonlSink>},
          {"tee", tee},
          {"write", write}};
}

}  // namespace ss::builtins

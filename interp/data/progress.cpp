// progress(it): wraps a loop's iterable in a progress bar on stderr
// (library.md, Data). When stderr is a terminal it redraws one line at most
// 10 times a second: count/total, a bar, the rate, the ETA and the logs
// most recently written to a sink during the loop. Otherwise it prints one
// summary line when the loop ends (or is left):
//   100 it in 1.2 s (83.3 it/s), loss 0.1234
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include "interp/data/batches.h"
#include "interp/eval/format.h"
#include "interp/eval/interpreter.h"
#include "interp/eval/objects.h"
#include "ops/api.h"

namespace ss::data {

using namespace ss::eval;

using VK = Value::Kind;

namespace {

using Clock = std::chrono::steady_clock;

std::string fixed(double v, int prec) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

std::string clock_text(double s) {
  if (!(s >= 0) || s > 1e7) return "?";
  int64_t t = static_cast<int64_t>(s + 0.5);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf,
                  sizeof buf,
                  "%lld:%02lld:%02lld",
                  static_cast<long long>(t / 3600),
                  static_cast<long long>(t / 60 % 60),
                  static_cast<long long>(t % 60));
  else
    std::snprintf(buf,
                  sizeof buf,
                  "%lld:%02lld",
                  static_cast<long long>(t / 60),
                  static_cast<long long>(t % 60));
  return buf;
}

// "loss 0.1234, acc 0.9" for the scalar values of [logs].
std::string logs_text(const LogsValue& logs, const char* sep) {
  std::string out;
  for (const auto& [name, v] : logs.fields) {
    double x;
    if (v.is_number())
      x = v.number();
    else if (v.kind == VK::Tensor && v.t.defined() && v.t.numel() == 1)
      x = v.t.item();
    else
      continue;
    if (!out.empty()) out += sep;
    out += name + " " + format_with_spec(Value::floating(x), ".4f");
  }
  return out;
}

// The values of a host collection, a tensor's rows or a model stack.
std::vector<Value> host_items(const Value& it) {
  std::vector<Value> out;
  switch (it.kind) {
    case VK::List:
    case VK::Tuple:
      if (it.items) return *it.items;
      break;
    case VK::Tensor:
      for (int64_t i = 0; it.t.rank() > 0 && i < it.t.shape()[0]; ++i)
        out.push_back(Value::tensor(ops::take_one(it.t, i, 0)));
      break;
    case VK::Model: {
      for (auto& r : it.as<ModelRef>()->stack_items())
        out.push_back(Value::object(VK::Model, std::move(r)));
      break;
    }
    default:
      break;
  }
  return out;
}

std::atomic<std::ostream*> g_err{nullptr};
std::atomic<int> g_tty{-1};

struct ProgressValue : IterableObject {
  Value inner;
  int tty = -1;  // -1: isatty(2)
  std::ostream* err = nullptr;

  int64_t length() const override {
    if (auto* it = dynamic_cast<IterableObject*>(inner.obj.get()))
      return it->length();
    if ((inner.kind == VK::List || inner.kind == VK::Tuple) && inner.items)
      return static_cast<int64_t>(inner.items->size());
    if (inner.kind == VK::Tensor && inner.t.rank() > 0)
      return inner.t.shape()[0];
    return -1;
  }
  std::unique_ptr<Cursor> cursor(Interpreter& in,
                                 diag::Span loop = {}) override;
};

struct ProgressCursor : Cursor {
  std::unique_ptr<Cursor> inner;
  std::vector<Value> items;
  size_t at = 0;
  int64_t total = -1, count = 0;
  bool tty = false, finished = false;
  bool notebook = false;  // tty, drawn without escape sequences
  size_t drawn = 0;       // the last line's length (notebook)
  std::ostream* err = &std::cerr;
  Interpreter* in = nullptr;
  Clock::time_point start = Clock::now(), last_draw;
  uint64_t writes_at_start = last_written().writes;

  ~ProgressCursor() override {
    if (!finished && std::uncaught_exceptions() == 0)
      finish();
    else if (!finished && tty)
      *err << "\n" << std::flush;
  }

  double elapsed() const {
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  std::string latest_logs(const char* sep) const {
    const LastWritten& w = last_written();
    if (w.writes == writes_at_start || !w.logs) return "";
    return logs_text(*w.logs, sep);
  }

  void draw() {
    double s = elapsed();
    double rate = s > 0 ? count / s : 0;
    std::string line;
    if (total >= 0) {
      int width = 20;
      int filled = total ? static_cast<int>(width * count / total) : width;
      line.append(std::to_string(count))
          .append("/")
          .append(std::to_string(total));
      line.append(" [").append(static_cast<size_t>(filled), '=');
      if (filled < width)
        line.append(">").append(static_cast<size_t>(width - filled - 1), ' ');
      line.append("] ").append(
          std::to_string(total ? 100 * count / total : 100));
      line.append("%");
    } else {
      line.append(std::to_string(count)).append(" it");
    }
    line.append(" ").append(fixed(rate, rate < 10 ? 2 : 1)).append(" it/s");
    if (total >= 0 && count < total)
      line.append(" ETA ").append(
          clock_text(rate > 0 ? (total - count) / rate : -1));
    else
      line.append(" ").append(clock_text(s));
    std::string logs = latest_logs(" ");
    if (!logs.empty()) line.append("  ").append(logs);
    // A terminal clears the rest of the line; a notebook's output renders
    // no escape sequence, so there the line is padded over the last one.
    if (notebook) {
      size_t n = line.size();
      if (n < drawn) line.append(drawn - n, ' ');
      drawn = n;
      *err << "\r" << line << std::flush;
    } else {
      *err << "\r" << line << "\x1b[K" << std::flush;
    }
    last_draw = Clock::now();
  }

  void finish() {
    finished = true;
    if (tty) {
      draw();
      *err << "\n" << std::flush;
      return;
    }
    double s = elapsed();
    std::string line = std::to_string(count) + " it in " +
                       fixed(s, s < 10 ? 2 : 1) + " s (" +
                       fixed(s > 0 ? count / s : 0, 1) + " it/s)";
    std::string logs = latest_logs(", ");
    if (!logs.empty()) line += ", " + logs;
    *err << line << "\n" << std::flush;
  }

  bool next(Value& out) override {
    bool ok;
    if (inner) {
      ok = inner->next(out);
    } else {
      ok = at < items.size();
      if (ok) out = items[at++];
    }
    if (!ok) {
      // The summary shows the last logs written: the loop's worker calls
      // finish first (async dispatch,
      // interp/devices/controller/async_dispatch.cpp).
      if (in) in->settle();
      if (!finished) finish();
      return false;
    }
    // Count the item about to run once the previous step has finished:
    // the count is of items handed out.
    ++count;
    if (tty && (count == 1 ||
                Clock::now() - last_draw > std::chrono::milliseconds(100)))
      draw();
    return true;
  }
};

std::unique_ptr<Cursor> ProgressValue::cursor(Interpreter& in,
                                              diag::Span loop) {
  auto c = std::make_unique<ProgressCursor>();
  c->in = &in;
  if (auto* it = dynamic_cast<IterableObject*>(inner.obj.get()))
    c->inner = it->cursor(in, loop);
  else
    c->items = host_items(inner);
  c->total = length();
  std::ostream* to = err ? err : g_err.load();
  const int t = err ? tty : (tty >= 0 ? tty : g_tty.load());
  c->tty = t < 0 ? isatty(2) != 0 : t != 0;
  c->notebook = t == 2;
  if (to) c->err = to;
  return c;
}

}  // namespace

void set_progress_output(std::ostream* err, int tty) {
  g_err.store(err);
  g_tty.store(tty);
}

/// progress(it) as a value: [tty] -1 asks isatty(2); [err] defaults to
/// std::cerr (tests pass their own).
Value make_progress(const Value& inner, int tty, std::ostream* err) {
  auto p = std::make_shared<ProgressValue>();
  p->inner = inner;
  p->tty = tty;
  p->err = err;
  VK kind = inner.kind == VK::Dataset || inner.kind == VK::Batches
                ? inner.kind
                : VK::Batches;
  return Value::object(kind, p);
}

}  // namespace ss::data

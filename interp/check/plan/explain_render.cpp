// The text of `ss explain`: a DeviceTable rendered as the report, list
// items wrapped at 92 columns.
#include <sstream>

#include "interp/check/plan/explain.h"
#include "ops/core/batch_split.h"

namespace ss::check::comms {

namespace {

// Wraps a paragraph at 92 columns.
std::string wrap_paragraph(const std::string& text) {
  constexpr size_t kWidth = 92;
  std::string out, line, word;
  auto flush = [&] {
    if (word.empty()) return;
    if (!line.empty() && line.size() + 1 + word.size() > kWidth) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    word.clear();
  };
  for (char c : text) {
    if (c == ' ')
      flush();
    else
      word += c;
  }
  flush();
  return out + line + "\n";
}

// Wraps one list item at 92 columns, continuation lines indented by two,
// never inside the figure after the last ": " (as "203,264 × f32 =
// 813,056 bytes (794 KiB)").
std::string wrap_item(const std::string& text) {
  constexpr size_t kWidth = 92;
  std::string s = "- " + text;
  size_t fig = s.rfind(": ");
  std::vector<std::string> words;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ' && !(fig != std::string::npos && i > fig + 1)) {
      if (!cur.empty()) words.push_back(cur);
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  if (!cur.empty()) words.push_back(cur);
  std::string out, line;
  auto width = [](const std::string& x) {
    size_t n = 0;  // code points, not bytes (×, ², ·)
    for (unsigned char c : x) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (const std::string& w : words) {
    if (line.empty()) {
      line = (out.empty() ? "" : "  ") + w;
    } else if (width(line) + 1 + width(w) <= kWidth) {
      line += " " + w;
    } else {
      out += line + "\n";
      line = "  " + w;
    }
  }
  out += line + "\n";
  return out;
}

}  // namespace

std::string render_line(const LineSends& l, size_t devices) {
  std::string among =
      l.among.empty() ? "the " + std::to_string(devices) + " devices" : l.among;
  std::string s = "Sent between " + among + " on this line, per call:\n\n";
  for (const Collective& c : l.collectives) s += wrap_item(c.text);
  for (const CallSend& c : l.calls) s += wrap_item(c.text);
  // mean_logs calls its fn once per batch: a line that sends only through
  // it sends its total for each batch.
  bool per_batch = l.collectives.empty() && !l.calls.empty();
  for (const CallSend& c : l.calls) per_batch &= c.per_batch;
  // The total is a forward call's (Collective::backward). A line whose
  // collectives all run in the backward pass (a `split H` cut) would read
  // "In all: 0 bytes." under its list: it says where its bytes go instead.
  Size backward;
  for (const Collective& c : l.collectives)
    if (c.backward) backward += c.bytes;
  if (l.total.zero() && !backward.zero())
    return s + "\nIn all: nothing in the forward pass, " +
           bytes_text(backward) + " in the backward pass.\n";
  s += "\nIn all: " + bytes_text(l.total) +
       (per_batch ? " for each batch" : "") + ".\n";
  return s;
}

std::string render_report(const DeviceTable& t) {
  std::ostringstream o;
  o << "Devices: " << t.devices << " (" << t.count
    << (t.count == 1 ? " device" : " devices") << ")";
  if (!t.mesh.empty())
    o << ", " << t.mesh;
  else if (t.count > 1)
    o << (t.split_dim.empty() ? ", data parallel"
                              : ", tensor parallel over " + t.split_dim);
  o << "\n";
  for (const std::string& opt : t.options) o << "  option: " << opt << "\n";
  for (const std::string& n : t.notes) o << "note: " << n << "\n";
  if (!t.example_split.empty()) {
    o << "A batch of " << *t.example_batch << " is split ";
    for (size_t i = 0; i < t.example_split.size(); ++i)
      o << (i ? "/" : "") << t.example_split[i];
    o << " (the file's batches(" << *t.example_batch << ")).\n";
  }
  if (t.deterministic && !t.deterministic_heads.empty()) {
    // Note [Heads one at a time] in interp/devices/lower/heads.cpp.
    const std::string& h = t.deterministic_heads;
    o << wrap_paragraph(
        "Deterministic: with split " + h +
        " every device holds the whole batch, which is not cut; each op "
        "on the heads runs one head at a time, on one device too, and a "
        "sum over the heads (a product over (" +
        h +
        " ...), or a cotangent of a value the heads share) adds one "
        "partial per head in one fixed tree over the head indices, so any "
        "device count computes one device's bits. Where the table says "
        "all-reduce, each device sends instead the subtrees of the tree it "
        "holds, gathered by all; the cotangent of the heads each device "
        "cut is gathered, not summed.");
  } else if (t.deterministic) {
    // Note [Deterministic mode] in interp/devices/lower/chunks.h.
    std::ostringstream d;
    d << "Deterministic: ";
    if (t.chunk)
      d << "a batch of " << *t.example_batch << " is cut into chunks of "
        << *t.chunk << " examples";
    else
      d << "a batch is cut into chunks of the least power of two from "
        << ops::kMinChunk << " that makes at most " << ops::kMaxChunks;
    d << ", each device holding whole chunks; each sum over the batch adds "
         "one partial per chunk in one fixed tree, so any device count "
         "computes one device's bits. Where the table says all-reduce, "
         "each device sends instead the subtrees of the tree it holds, "
         "gathered by all, as its sum happens (a gradient's in the "
         "backward pass).";
    o << wrap_paragraph(d.str());
  }
  for (const FnEntry& f : t.fns) {
    o << "\nfn " << f.name << " (" << f.file << ":" << f.line << ") " << f.text
      << ".\n";
    bool any = false;
    for (const ValueLayout& v : t.values) {
      if (v.fn != f.name) continue;
      if (!any) o << "\n";
      any = true;
      o << "  " << v.name << ": " << v.type << " — " << v.text << "\n";
      if (!v.fused.empty()) o << "    " << v.fused << "\n";
    }
    for (const LineSends& l : t.lines) {
      if (l.fn != f.name) continue;
      o << "\n"
        << l.file << ":" << l.line << ": " << l.source << "\n\n"
        << l.text;
    }
  }
  return o.str();
}

}  // namespace ss::check::comms

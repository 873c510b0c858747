// `ss explain FILE [--devices SPEC] [--json]` (cli.md; devices.md, "The
// `ss explain` report"): checks FILE, then prints every hover of the file as
// text — each fn's placement, each value's layout, each line's collectives —
// or, with --json, the DeviceTable as data.
#include <iostream>
#include <nlohmann/json.hpp>

#include "interp/check/checker.h"
#include "interp/cli/commands.h"
#include "interp/cli/help.h"
#include "interp/devices/devices.h"

namespace ss::cli {

namespace {

using nlohmann::json;
namespace comms = check::comms;

json size_json(const comms::Size& s) {
  if (s.known()) return s.value();
  return nullptr;
}

const char* layout_kind(comms::ValueLayout::Kind k) {
  using K = comms::ValueLayout::Kind;
  switch (k) {
    case K::Split:
      return "split";
    case K::Whole:
      return "whole";
    case K::ModelCopy:
      return "model_copy";
    case K::OptimCopy:
      return "optimizer_copy";
    case K::ModelShards:
      return "model_shards";
    case K::OptimShards:
      return "optimizer_shards";
    case K::Blocks:
      return "blocks";
    case K::Controller:
      return "controller";
    case K::Anywhere:
      return "anywhere";
    case K::OneDevice:
      return "one_device";
  }
  return "whole";
}

const char* placement_key(check::FnInfo::Placement p) {
  switch (p) {
    case check::FnInfo::Placement::Controller:
      return "controller";
    case check::FnInfo::Placement::Workers:
      return "workers";
    case check::FnInfo::Placement::Anywhere:
      return "anywhere";
  }
  return "anywhere";
}

json table_json(const comms::DeviceTable& t) {
  json j;
  j["devices"] = t.devices;
  j["count"] = t.count;
  j["options"] = t.options;
  j["mesh"] = t.mesh;
  j["notes"] = t.notes;
  j["example_batch"] = t.example_batch ? json(*t.example_batch) : json(nullptr);
  j["example_split"] = t.example_split;
  j["deterministic"] = t.deterministic;
  j["chunk"] = t.chunk ? json(*t.chunk) : json(nullptr);
  j["deterministic_heads"] = t.deterministic_heads.empty()
                                 ? json(nullptr)
                                 : json(t.deterministic_heads);
  json fns = json::array();
  for (const comms::FnEntry& f : t.fns) {
    json e;
    e["name"] = f.name;
    e["placement"] = placement_key(f.placement);
    e["placement_words"] = f.placement_words;
    if (!f.reason.empty()) e["reason"] = f.reason;
    if (!f.reason_at.empty()) e["reason_at"] = f.reason_at;
    e["file"] = f.file;
    e["line"] = f.line;
    if (f.bytes_per_call) {
      e["bytes_per_call"] = size_json(*f.bytes_per_call);
      e["bytes_per_call_text"] = comms::bytes_text(*f.bytes_per_call);
    }
    e["text"] = f.text;
    fns.push_back(e);
  }
  j["fns"] = fns;
  json values = json::array();
  for (const comms::ValueLayout& v : t.values) {
    json e;
    e["fn"] = v.fn;
    e["name"] = v.name;
    e["param"] = v.param;
    e["type"] = v.type;
    e["layout"] = layout_kind(v.kind);
    if (!v.axis.empty()) e["axis"] = v.axis;
    if (v.model_bytes) e["model_bytes"] = *v.model_bytes;
    e["text"] = v.text;
    if (!v.fused.empty()) e["fused"] = v.fused;
    if (v.line) {
      e["file"] = v.file;
      e["line"] = v.line;
    }
    values.push_back(e);
  }
  j["values"] = values;
  json lines = json::array();
  for (const comms::LineSends& l : t.lines) {
    json e;
    e["file"] = l.file;
    e["line"] = l.line;
    e["fn"] = l.fn;
    e["source"] = l.source;
    json cs = json::array();
    for (const comms::Collective& c : l.collectives) {
      json x;
      x["op"] = c.op;
      x["source"] = c.source;
      x["what"] = c.what;
      x["count"] = size_json(c.count);
      x["count_text"] = c.count.str();
      x["dtype"] = c.dtype;
      x["bytes"] = size_json(c.bytes);
      x["bytes_text"] = comms::bytes_text(c.bytes);
      x["text"] = c.text;
      x["backward"] = c.backward;
      cs.push_back(x);
    }
    e["collectives"] = cs;
    json calls = json::array();
    for (const comms::CallSend& c : l.calls) {
      json x;
      x["fn"] = c.fn;
      x["bytes"] = size_json(c.bytes);
      x["bytes_text"] = comms::bytes_text(c.bytes);
      x["differentiated"] = c.differentiated;
      x["per_batch"] = c.per_batch;
      x["text"] = c.text;
      calls.push_back(x);
    }
    e["calls"] = calls;
    e["total"] = size_json(l.total);
    e["total_text"] = comms::bytes_text(l.total);
    e["text"] = l.text;
    lines.push_back(e);
  }
  j["lines"] = lines;
  return j;
}

}  // namespace

int cmd_explain(const std::vector<std::string>& args) {
  std::string file;
  bool json_out = false;
  check::Options opts;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json_out = true;
    } else if (ProgramOption o = program_option("explain", args, i, opts);
               o != ProgramOption::NotMine) {
      if (o == ProgramOption::Bad) return kExitUsage;
    } else if (a == "--help" || a == "-h") {
      std::cout << command_help("explain");
      return kExitOk;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "ss explain: unknown option '" << a << "'\n";
      return kExitUsage;
    } else if (file.empty()) {
      file = a;
    } else {
      std::cerr << "ss explain: one FILE only (got '" << file << "' and '" << a
                << "')\n";
      return kExitUsage;
    }
  }
  if (file.empty()) {
    std::cerr << usage_line("explain");
    return kExitUsage;
  }
  if (!readable(file)) return kExitRuntime;
  diag::SourceMap sm;
  diag::Diagnostics diags;
  auto prog = check::check_file(file, sm, diags, opts);
  if (!prog) {
    if (json_out) {
      std::cout << diag::render_json(diags, sm);
    } else {
      std::cerr << diag::render_terminal(diags, sm);
      std::cerr << diags.size()
                << (diags.size() == 1 ? " error\n" : " errors\n");
    }
    return kExitStatic;
  }
  comms::DeviceTable t = comms::build_table(*prog, sm);
  if (json_out)
    std::cout << table_json(t).dump(2) << "\n";
  else
    std::cout << comms::render_report(t);
  return kExitOk;
}

}  // namespace ss::cli

// The device list's options (devices.md item 9): `shard params` and
// `split H`, checked once the dims have their sizes: E1902, E1903, E1904;
// and the device list against a mesh (spmd.md): E2005.
// Like every several-devices check, they run against the device list in
// effect (the file's, or --devices) and report nothing on one device, so
// the same file checks on `devices cpu` (docs/errors/E1902.md).
#include <algorithm>
#include <cctype>

#include "interp/check/checker_impl.h"
#include "interp/check/program_options.h"

namespace ss::check {

namespace {

using diag::Code;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(c));
  return s;
}

// The dim [name] most likely meant: a near spelling, else a dim whose
// name starts it (`heads` for H).
std::string likely_dim(const std::string& name,
                       const std::vector<std::string>& dims) {
  if (std::string s = suggest(name, dims); !s.empty()) return s;
  for (const std::string& d : dims)
    if (lower(name).rfind(lower(d), 0) == 0) return d;
  return "";
}

std::string or_list(const std::vector<int64_t>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i == 0               ? ""
          : i + 1 == xs.size() ? " or "
                               : ", ") +
         std::to_string(xs[i]);
  return s;
}

}  // namespace

void Checker::check_device_options() {
  const ast::DevicesDecl* decl = nullptr;
  const ast::MeshDecl* mesh = nullptr;
  for (const ast::Module& m : prog_->modules()) {
    if (!m.devices.empty() && !decl) decl = &m.devices.front();
    if (!m.meshes.empty() && !mesh) mesh = &m.meshes.front();
  }
  DeviceList& dl = prog_->devices_;
  if (mesh) check_mesh_devices(*mesh, decl);
  check_deterministic(decl, mesh);
  if (!decl) return;
  const ast::DeviceOption* first_split = nullptr;
  for (const ast::DeviceOption& o : decl->options) {
    if (o.words.size() == 2 && o.words[0] == "shard" && o.words[1] == "params")
      dl.shard_params = true;
    if (mesh && !o.words.empty() &&
        (o.words[0] == "split" || o.words[0] == "shard")) {
      // A mesh program partitions data through its spmd fns only.
      error(Code::E2005,
            o.span,
            "`" + text(o.span) + "` with a mesh",
            "an option of the automatic several-devices mode")
          .note("the mesh is here", mesh->span)
          .help(
              "remove it: with a mesh, each spmd fn's types say how its "
              "data is split");
      continue;
    }
    if (o.words.empty() || o.words[0] != "split") continue;
    if (first_split) {
      if (dl.count() > 1)
        error(Code::E1903,
              o.span,
              "more than one `split` option",
              "a second split")
            .note("`" + text(first_split->span) + "` is here",
                  first_split->span)
            .help("keep one split; `shard params` may go with it");
      continue;
    }
    first_split = &o;
    const std::string name = o.words.size() > 1 ? o.words[1] : "";
    const auto dim = prog_->dims_.find(name);
    if (o.words.size() == 2 && dim != prog_->dims_.end()) {
      dl.split_dim = name;
      if (dl.count() < 2 || dim->second % static_cast<int64_t>(dl.count()) == 0)
        continue;
      std::vector<int64_t> fits;
      for (int64_t n = 2; n <= dim->second; ++n)
        if (dim->second % n == 0) fits.push_back(n);
      auto& d = error(Code::E1902,
                      o.span,
                      "the " + std::to_string(dl.count()) +
                          " devices do not divide " + name + " = " +
                          std::to_string(dim->second),
                      "split over " + device_list_text(dl));
      if (fits.empty())
        d.help(name + " = 1 cannot be split: remove `split " + name + "`");
      else
        d.help("use a number of devices that divides " +
               std::to_string(dim->second) + ": " + or_list(fits));
      continue;
    }
    if (dl.count() < 2) continue;
    // `split` alone, `split H Dh`, or a name that is no dim.
    diag::Span at = o.words.size() == 2 ? o.word_spans[1] : o.span;
    std::vector<std::string> dims;
    for (const auto& [n, _] : prog_->dims_) dims.push_back(n);
    auto& d =
        o.words.size() == 2
            ? error(Code::E1904,
                    at,
                    "`split " + name + "`: `" + name + "` is not a dim",
                    "not declared with `dim`")
            : error(Code::E1904,
                    at,
                    "`split` names one dim: `split H`",
                    o.words.size() < 2 ? "no dim named" : "more than one name");
    if (std::string s = likely_dim(name, dims); !s.empty())
      d.help("did you mean `" + s + "`? (dim " + s + " = " +
                 std::to_string(prog_->dims_.at(s)) + ")",
             {"Change to `" + s + "`", at, s});
  }
}

// Deterministic mode (Note [Deterministic mode] in
// interp/devices/lower/chunks.h) cuts the batch into chunks and folds
// them in one tree, which covers data parallelism and `shard params`, and
// under `split H` runs the heads one at a time and folds them in the
// same kind of tree (Note [Heads one at a time] in
// interp/devices/lower/heads.cpp). A mesh program's spmd fns add as their
// collectives do, in orders the mesh's layout decides: refused, on every
// device list alike, rather than promised and broken.
void Checker::check_deterministic(const ast::DevicesDecl* decl,
                                  const ast::MeshDecl* mesh) {
  if (!prog_->devices_.deterministic || !mesh) return;
  const ast::DeviceOption* det = nullptr;
  if (decl)
    for (const ast::DeviceOption& o : decl->options)
      if (o.words.size() == 1 && o.words[0] == "deterministic") det = &o;
  auto& d = error(Code::E2005,
                  det ? det->span : mesh->span,
                  "deterministic mode with a mesh",
                  det ? "deterministic mode" : "not deterministic");
  if (!det) d.note("--deterministic asks for deterministic mode");
  d.help(
      "remove `deterministic`: a mesh program's spmd fns add in the order "
      "their collectives give");
}

void Checker::check_mesh_devices(const ast::MeshDecl& mesh,
                                 const ast::DevicesDecl* decl) {
  const DeviceList& dl = prog_->devices_;
  int64_t instances = 1;
  std::string axes;
  for (const MeshAxis& a : prog_->mesh_) {
    instances *= a.size;
    axes += (axes.empty() ? "" : " ") + a.name + "=" + std::to_string(a.size);
  }
  // `devices cpu` simulates every instance in one process.
  if (dl.count() == 1 || static_cast<int64_t>(dl.count()) == instances) return;
  auto& d = error(Code::E2005,
                  mesh.span,
                  "the mesh has " + std::to_string(instances) + " instances (" +
                      axes + "), but " + device_list_text(dl) + " has " +
                      std::to_string(dl.count()) + " devices",
                  std::to_string(instances) + " instances");
  if (decl) d.note("the device list is here", decl->span);
  DeviceList fit = dl;
  fit.ids.clear();
  for (int64_t i = 0; i < instances; ++i) fit.ids.push_back(i);
  d.help("use " + device_list_text(fit) + ", or devices " + dl.kind +
         " to simulate the mesh in one process");
}

}  // namespace ss::check

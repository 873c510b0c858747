// A mesh's geometry (mesh_shape.h).
#include "interp/eval/spmd/mesh_shape.h"

#include <algorithm>

#include "ops/core/op_error.h"

namespace ss::eval::spmd {

MeshShape::MeshShape(std::vector<check::MeshAxis> axes)
    : axes_(std::move(axes)) {
  for (const check::MeshAxis& a : axes_) count_ *= std::max<int64_t>(a.size, 1);
}

std::vector<int64_t> MeshShape::coords(int64_t n) const {
  std::vector<int64_t> c(axes_.size());
  for (size_t k = axes_.size(); k-- > 0;) {
    c[k] = n % axes_[k].size;
    n /= axes_[k].size;
  }
  return c;
}

std::string MeshShape::label(int64_t n) const {
  std::vector<int64_t> c = coords(n);
  std::string s;
  for (size_t k = 0; k < axes_.size(); ++k)
    s += (k ? " " : "") + axes_[k].name + "=" + std::to_string(c[k]);
  return s;
}

int MeshShape::axis_pos(const std::string& name) const {
  for (size_t k = 0; k < axes_.size(); ++k)
    if (axes_[k].name == name) return static_cast<int>(k);
  return -1;
}

namespace {

int known_axis(const MeshShape& m, const std::string& name) {
  int p = m.axis_pos(name);
  if (p < 0)
    throw ops::OpError(ops::OpError::Kind::Value,
                       "`" + name + "` is not an axis of the mesh");
  return p;
}

}  // namespace

int64_t MeshShape::index_along(int64_t n, const std::string& name) const {
  return coords(n)[known_axis(*this, name)];
}

int64_t MeshShape::size_of(const std::string& name) const {
  return axes_[known_axis(*this, name)].size;
}

std::vector<int64_t> MeshShape::group(
    int64_t me, const std::vector<std::string>& names) const {
  std::vector<int64_t> c = coords(me);
  std::vector<int> pos;
  int64_t size = 1;
  for (const std::string& n : names) {
    int p = known_axis(*this, n);
    pos.push_back(p);
    size *= axes_[p].size;
  }
  std::vector<int64_t> members;
  for (int64_t g = 0; g < size; ++g) {
    // g in mixed radix over [names], the first name major.
    std::vector<int64_t> m = c;
    int64_t r = g;
    for (size_t k = pos.size(); k-- > 0;) {
      m[pos[k]] = r % axes_[pos[k]].size;
      r /= axes_[pos[k]].size;
    }
    int64_t id = 0;
    for (size_t k = 0; k < axes_.size(); ++k) id = id * axes_[k].size + m[k];
    members.push_back(id);
  }
  return members;
}

}  // namespace ss::eval::spmd

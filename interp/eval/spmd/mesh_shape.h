#pragma once
// A mesh's geometry (spmd.md, Mesh): its axes, and how an instance's
// number maps to its index along each axis (x major: instance (i, j) of
// `mesh x=4 y=2` is number i·2 + j, the worker of that rank on cpu[8]).
// The simulated mode's SimMesh and the workers' WorkerMesh (interp/devices/
// lower/worker_mesh.h) both see the mesh through it, and blocks.h cuts
// arguments and joins results by it, so instance n holds the same block in
// either mode.

#include <cstdint>
#include <string>
#include <vector>

#include "interp/check/checked.h"

namespace ss::eval::spmd {

class MeshShape {
 public:
  explicit MeshShape(std::vector<check::MeshAxis> axes);

  int64_t instances() const { return count_; }
  const std::vector<check::MeshAxis>& axes() const { return axes_; }
  /// Instance [n]'s index along each mesh axis (x major: n = i·|y| + j).
  std::vector<int64_t> coords(int64_t n) const;
  /// `x=1 y=0`: how prints and errors name instance [n].
  std::string label(int64_t n) const;
  /// The position of mesh axis [name] (-1: not an axis).
  int axis_pos(const std::string& name) const;
  /// Instance [n]'s index along mesh axis [name], and the axis's size
  /// (axis_index, axis_size); OpError for a name that is not an axis.
  int64_t index_along(int64_t n, const std::string& name) const;
  int64_t size_of(const std::string& name) const;
  /// The members of [me]'s group for the mesh axes [names] (the instances
  /// that share every other axis's index), in group order: mixed radix
  /// over [names], the first major. Throws OpError for a name that is not
  /// an axis.
  std::vector<int64_t> group(int64_t me,
                             const std::vector<std::string>& names) const;

 private:
  std::vector<check::MeshAxis> axes_;
  int64_t count_ = 1;
};

}  // namespace ss::eval::spmd

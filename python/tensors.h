#pragma once
// Tensors between Python and ShapeScript (issue 27): numpy arrays through
// the buffer protocol and torch tensors through DLPack, zero-copy where
// the layout allows, and ShapeScript's tensors out as `shapescript.Tensor`,
// which numpy (`__array__`) and torch (`__dlpack__`) read without a copy.

#include <pybind11/pybind11.h>

#include <optional>

#include "ops/core/tensor.h"

namespace ss::python {

namespace py = pybind11;

/// [obj] as a tensor, when it is one: a shapescript.Tensor, a numpy
/// array (or anything with the buffer protocol and a numeric format), or
/// an object with `__dlpack__` (torch). Its bytes are shared where it is
/// C-contiguous and aligned, else copied once. Throws TypeError for a
/// dtype ShapeScript has not.
std::optional<ops::Tensor> tensor_from(const py::handle& obj);

/// The Python class `shapescript._core.Tensor`, defined on [m].
void define_tensor(py::module_& m);

/// [t] as a `shapescript._core.Tensor`.
py::object wrap_tensor(ops::Tensor t);

}  // namespace ss::python

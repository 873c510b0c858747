#include "python/tensors.h"

#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <cstring>
#include <string>

namespace ss::python {

using types::DType;

namespace {

// A Python object kept alive by a tensor over its bytes. The tensor may
// be dropped on the session's thread, without the GIL: take it first, and
// not at all once the interpreter is gone.
std::shared_ptr<void> keep(py::handle obj) {
  obj.inc_ref();
  return std::shared_ptr<void>(obj.ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}

[[noreturn]] void no_dtype(const std::string& what) {
  throw py::type_error(
      "ShapeScript has no dtype for " + what +
      ": its dtypes are f32, f64, bf16, f16, i32, i64 and bool (numpy: "
      "convert with `.astype(numpy.float32)`; torch: `.float()`)");
}

DType numpy_dtype(const py::dtype& d) {
  const char k = d.kind();
  const ssize_t n = d.itemsize();
  if (k == 'f' && n == 4) return DType::F32;
  if (k == 'f' && n == 8) return DType::F64;
  if (k == 'f' && n == 2) return DType::F16;
  if (k == 'i' && n == 4) return DType::I32;
  if (k == 'i' && n == 8) return DType::I64;
  if (k == 'b' && n == 1) return DType::Bool;
  no_dtype("numpy's " +
           py::str(static_cast<const py::handle&>(d)).cast<std::string>());
}

ops::Shape shape_of(const ssize_t* dims, int ndim) {
  ops::Shape s;
  for (int i = 0; i < ndim; ++i) s.push_back(static_cast<int64_t>(dims[i]));
  return s;
}

// A numpy array (or a buffer numpy reads): its bytes shared when they are
// C-contiguous and aligned, else a contiguous copy's.
ops::Tensor from_numpy(py::array a) {
  DType d = numpy_dtype(a.dtype());
  const bool shared =
      (a.flags() & py::array::c_style) &&
      reinterpret_cast<uintptr_t>(a.data()) % types::dtype_size(d) == 0;
  if (!shared) a = py::module_::import("numpy").attr("ascontiguousarray")(a);
  ops::Shape s = shape_of(a.shape(), static_cast<int>(a.ndim()));
  return ops::Tensor::external(const_cast<void*>(a.data()), s, d, keep(a));
}

std::optional<DType> dlpack_dtype(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  if (t.code == kDLFloat && t.bits == 32) return DType::F32;
  if (t.code == kDLFloat && t.bits == 64) return DType::F64;
  if (t.code == kDLFloat && t.bits == 16) return DType::F16;
  if (t.code == kDLBfloat && t.bits == 16) return DType::BF16;
  if (t.code == kDLInt && t.bits == 32) return DType::I32;
  if (t.code == kDLInt && t.bits == 64) return DType::I64;
  if (t.code == 6 /* kDLBool, DLPack 0.8 */ && t.bits == 8) return DType::Bool;
  return std::nullopt;
}

// A DLPack capsule's tensor (torch's `__dlpack__()`): shared when it is
// on the CPU and C-contiguous; the capsule's deleter runs when the tensor
// goes.
std::optional<ops::Tensor> from_dlpack(py::handle obj) {
  py::object cap = obj.attr("__dlpack__")();
  auto* m = static_cast<DLManagedTensor*>(
      PyCapsule_GetPointer(cap.ptr(), "dltensor"));
  if (!m) throw py::error_already_set();
  const DLTensor& t = m->dl_tensor;
  if (t.device.device_type != kDLCPU)
    throw py::type_error(
        "the tensor is on another device: ShapeScript takes CPU tensors "
        "from Python (`.cpu()` first)");
  std::optional<DType> d = dlpack_dtype(t.dtype);
  if (!d) no_dtype("this tensor's dtype");
  ops::Shape s;
  for (int i = 0; i < t.ndim; ++i) s.push_back(t.shape[i]);
  bool contiguous = true;
  if (t.strides) {
    int64_t want = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
      if (t.shape[i] != 1 && t.strides[i] != want) contiguous = false;
      want *= t.shape[i];
    }
  }
  if (!contiguous) {
    // torch's `.contiguous()`: one copy, then shared.
    return from_dlpack(obj.attr("contiguous")());
  }
  // Consumed: the capsule no longer frees it; our keeper does.
  PyCapsule_SetName(cap.ptr(), "used_dltensor");
  std::shared_ptr<void> keeper(m, [](void* p) {
    auto* mt = static_cast<DLManagedTensor*>(p);
    if (mt->deleter && Py_IsInitialized()) {
      py::gil_scoped_acquire gil;
      mt->deleter(mt);
    }
  });
  char* data = static_cast<char*>(t.data) + t.byte_offset;
  return ops::Tensor::external(data, s, *d, std::move(keeper));
}

// ------------------------------------------------------- Tensor (out)

struct PyTensor {
  ops::Tensor t;
};

DLDataType dlpack_of(DType d) {
  switch (d) {
    case DType::F32:
      return {kDLFloat, 32, 1};
    case DType::F64:
      return {kDLFloat, 64, 1};
    case DType::F16:
      return {kDLFloat, 16, 1};
    case DType::BF16:
      return {kDLBfloat, 16, 1};
    case DType::I32:
      return {kDLInt, 32, 1};
    case DType::I64:
      return {kDLInt, 64, 1};
    case DType::Bool:
      return {6, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

struct Exported {
  DLManagedTensor m{};
  ops::Tensor t;
  std::vector<int64_t> shape;
};

py::capsule dlpack_capsule(const ops::Tensor& t) {
  auto* e = new Exported;
  // A GPU's value is exported as a host copy (numpy and torch.from_dlpack
  // read it on the CPU; a GPU's bytes would need the stream handshake).
  e->t = t.to(ops::Device{});
  e->shape = t.shape();
  DLTensor& d = e->m.dl_tensor;
  d.data = e->t.raw();
  d.device = {kDLCPU, 0};
  d.ndim = static_cast<int>(e->shape.size());
  d.dtype = dlpack_of(t.dtype());
  d.shape = e->shape.data();
  d.strides = nullptr;  // C-contiguous
  d.byte_offset = 0;
  e->m.manager_ctx = e;
  e->m.deleter = [](DLManagedTensor* m) {
    delete static_cast<Exported*>(m->manager_ctx);
  };
  // Freed by the capsule only if nobody consumed it (DLPack's protocol).
  return py::capsule(&e->m, "dltensor", [](PyObject* cap) {
    if (PyCapsule_IsValid(cap, "dltensor")) {
      auto* m =
          static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
      if (m && m->deleter) m->deleter(m);
    }
  });
}

py::array numpy_view(const PyTensor& self) {
  // A GPU's value: numpy sees a host copy.
  const ops::Tensor t = self.t.to(ops::Device{});
  std::string fmt;
  switch (t.dtype()) {
    case DType::F32:
      fmt = py::format_descriptor<float>::format();
      break;
    case DType::F64:
      fmt = py::format_descriptor<double>::format();
      break;
    case DType::F16:
      fmt = "e";
      break;
    case DType::I32:
      fmt = py::format_descriptor<int32_t>::format();
      break;
    case DType::I64:
      fmt = py::format_descriptor<int64_t>::format();
      break;
    case DType::Bool:
      fmt = "?";
      break;
    case DType::BF16:
      throw py::type_error(
          "numpy has no bf16: read it with torch.from_dlpack(t), or convert "
          "it in ShapeScript (to(x, f32))");
  }
  std::vector<ssize_t> shape(t.shape().begin(), t.shape().end());
  std::vector<ssize_t> strides(shape.size());
  ssize_t s = types::dtype_size(t.dtype());
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= shape[i];
  }
  // The array's base keeps the storage; ShapeScript's values are
  // immutable (language.md), so numpy sees them read-only.
  auto* owner = new ops::Tensor(t);
  py::capsule base(owner, [](void* p) { delete static_cast<ops::Tensor*>(p); });
  py::array a(py::dtype(fmt), shape, strides, const_cast<void*>(t.raw()), base);
  py::detail::array_proxy(a.ptr())->flags &=
      ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

}  // namespace

std::optional<ops::Tensor> tensor_from(const py::handle& obj) {
  static py::object tensor_type =
      py::module_::import("shapescript._core").attr("Tensor");
  if (py::isinstance(obj, tensor_type)) return obj.cast<PyTensor&>().t;
  if (py::hasattr(obj, "__dlpack__") && !py::isinstance<py::array>(obj))
    return from_dlpack(obj);
  if (py::isinstance<py::array>(obj))
    return from_numpy(py::reinterpret_borrow<py::array>(obj));
  return std::nullopt;
}

py::object wrap_tensor(ops::Tensor t) {
  return py::cast(PyTensor{std::move(t)});
}

void define_tensor(py::module_& m) {
  py::class_<PyTensor>(m,
                       "Tensor",
                       "A ShapeScript tensor: numpy reads it with "
                       "numpy.asarray(t), torch with torch.from_dlpack(t), "
                       "both without a copy.")
      .def_property_readonly("shape",
                             [](const PyTensor& s) {
                               py::tuple out(s.t.rank());
                               for (size_t i = 0; i < s.t.rank(); ++i)
                                 out[i] = s.t.shape()[i];
                               return out;
                             })
      .def_property_readonly(
          "dtype",
          [](const PyTensor& s) { return types::dtype_name(s.t.dtype()); })
      .def_property_readonly("ndim",
                             [](const PyTensor& s) { return s.t.rank(); })
      .def("__len__",
           [](const PyTensor& s) {
             if (s.t.rank() == 0) throw py::type_error("len() of a 0-d tensor");
             return s.t.shape()[0];
           })
      .def("numpy",
           &numpy_view,
           "The tensor as a read-only numpy array "
           "over the same bytes.")
      .def(
          "__array__",
          [](const PyTensor& s, py::object dtype) {
            py::array a = numpy_view(s);
            if (!dtype.is_none()) return py::array(a.attr("astype")(dtype));
            return a;
          },
          py::arg("dtype") = py::none())
      .def(
          "__dlpack__",
          [](const PyTensor& s, py::object stream) {
            return dlpack_capsule(s.t);
          },
          py::arg("stream") = py::none())
      .def("__dlpack_device__",
           [](const PyTensor&) { return py::make_tuple(int(kDLCPU), 0); })
      .def("item",
           [](const PyTensor& s) -> py::object {
             if (s.t.numel() != 1)
               throw py::value_error("item() of a tensor of " +
                                     std::to_string(s.t.numel()) + " elements");
             if (types::is_float(s.t.dtype())) return py::float_(s.t.item());
             if (s.t.dtype() == DType::Bool) return py::bool_(s.t.item() != 0);
             return py::int_(static_cast<int64_t>(s.t.item()));
           })
      .def("__float__",
           [](const PyTensor& s) {
             if (s.t.numel() != 1)
               throw py::type_error("only a one-element tensor is a float");
             return s.t.item();
           })
      .def("__int__",
           [](const PyTensor& s) {
             if (s.t.numel() != 1)
               throw py::type_error("only a one-element tensor is an int");
             return static_cast<int64_t>(s.t.item());
           })
      .def("__repr__", [](const PyTensor& s) {
        std::string r = "shapescript.Tensor(" + ops::shape_string(s.t.shape()) +
                        " " + types::dtype_name(s.t.dtype());
        if (s.t.numel() <= 8 && s.t.dtype() != DType::BF16) {
          r += ", [";
          for (int64_t i = 0; i < s.t.numel(); ++i) {
            if (i) r += ", ";
            std::string v = std::to_string(s.t.at(i));
            r += v;
          }
          r += "]";
        }
        return r + ")";
      });
}

}  // namespace ss::python

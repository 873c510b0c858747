// shapescript._core: the compiled half of the Python module (issue 27),
// over the embedding API (interp/embed/embed.h) alone. The pure-Python
// half (python/shapescript/) gives it the seed's shape: programs with
// their fns and models as attributes, handles, datasets, errors.
//
// Note [The GIL around ShapeScript]
// A call converts its arguments with the GIL held, then releases it while
// ShapeScript runs (on one device on this thread, switched to the deep
// stack: embed::DeepStack; with workers on the session's embed::DeepThread),
// and takes it again only to print to sys.stdout, to drop a Python object
// a tensor kept, and every 50 ms to look for Ctrl-C (the session's poll),
// which stops the call as the repl's Ctrl-C does and raises
// KeyboardInterrupt here with the session kept.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>

#include "interp/embed/embed.h"
#include "ops/backend/backend.h"
#include "python/output.h"
#include "python/tensors.h"

namespace ss::python {

namespace {

/// A loaded program. Values keep it (and its checked programs) alive.
struct PySession {
  // Ends the workers without the GIL: the session's thread may want it
  // (a print, a Python object a tensor kept) while they stop.
  ~PySession() {
    if (s && PyGILState_Check()) {
      py::gil_scoped_release release;
      s.reset();
    }
  }
  std::unique_ptr<PythonStream> buf = std::make_unique<PythonStream>("stdout");
  std::unique_ptr<std::ostream> out = std::make_unique<std::ostream>(buf.get());
  std::unique_ptr<embed::Session> s;
  std::mutex mu;  // one call at a time (embed::Session is not thread-safe)

  embed::Session& get() {
    if (!s) throw py::value_error("this program was closed");
    return *s;
  }
};

struct PyValue {
  embed::Value v;
  std::shared_ptr<PySession> session;
};

struct PyCursor {
  PyCursor() = default;
  PyCursor(PyCursor&&) = default;
  // Its loader threads may wait for the GIL (a dataset written in
  // Python): they end without it.
  ~PyCursor() {
    if (c && PyGILState_Check()) {
      py::gil_scoped_release release;
      c.reset();
    }
  }
  std::unique_ptr<embed::Session::Cursor> c;
  std::shared_ptr<PySession> session;
};

/// Text written into a call as it is (a type's name: `Digit`).
struct Text {
  std::string text;
};

py::dict& error_classes() {
  static py::dict* d = new py::dict();  // never freed: outlives the module
  return *d;
}

py::object error_class(const std::string& kind) {
  py::dict& d = error_classes();
  if (d.contains(kind)) return d[py::str(kind)];
  return d["Error"];
}

py::list problems_of(const std::vector<embed::Problem>& problems) {
  py::list out;
  for (const embed::Problem& p : problems) {
    py::dict d;
    d["code"] = p.code;
    d["message"] = p.message;
    d["file"] = p.file;
    d["line"] = p.line;
    d["column"] = p.column;
    d["text"] = p.text;
    out.append(d);
  }
  return out;
}

void raise_check_failed(const embed::CheckFailed& e) {
  py::object cls = error_class("CheckError");
  py::list problems = problems_of(e.problems);
  std::string first = e.problems.empty() ? e.text
                                         : "error[" + e.problems[0].code +
                                               "]: " + e.problems[0].message;
  if (e.problems.size() > 1)
    first += " (and " + std::to_string(e.problems.size() - 1) + " more)";
  py::object exc = cls(first);
  exc.attr("problems") = problems;
  exc.attr("text") = e.text;
  exc.attr("add_note")(e.text);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

/// A HostError's exception (Note [Extern fns of a host language]): the
/// one the Python function raised, from the payload its note carries.
py::object host_exception(const embed::Error& e) {
  const std::string mark = embed::host_note();
  for (const std::string& n : e.notes)
    if (n.rfind(mark, 0) == 0) {
      py::object exc = py::module_::import("shapescript._externs")
                           .attr("exception")(n.substr(mark.size()));
      if (!exc.is_none()) return exc;
    }
  return error_class("Error")(e.message);
}

void raise_error(const embed::Error& e) {
  if (e.kind == "KeyboardInterrupt") {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    return;
  }
  const bool host = e.kind == "HostError";
  py::object exc = host ? host_exception(e) : error_class(e.kind)(e.message);
  py::object cls = py::type::of(exc);
  if (host) {
    if (!e.location.empty()) exc.attr("add_note")("at " + e.location);
    for (const std::string& n : e.notes)
      if (n.rfind(embed::host_note(), 0) != 0) exc.attr("add_note")(n);
    for (const std::string& s : e.stack) exc.attr("add_note")(s);
    PyErr_SetObject(cls.ptr(), exc.ptr());
    return;
  }
  exc.attr("kind") = e.kind;
  exc.attr("location") = e.location;
  exc.attr("text") = e.text;
  exc.attr("stack") = e.stack;
  if (e.kind == "WorkerError") {
    exc.attr("worker") =
        e.worker < 0 ? py::object(py::none()) : py::object(py::int_(e.worker));
    exc.attr("how") = e.how;
    exc.attr("running") = e.running;
    exc.attr("where") = e.where;
  }
  if (!e.location.empty()) exc.attr("add_note")("at " + e.location);
  for (const std::string& n : e.notes) exc.attr("add_note")(n);
  for (const std::string& s : e.stack) exc.attr("add_note")(s);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

py::object to_python(embed::Value v, const std::shared_ptr<PySession>& s);

py::object to_python(embed::Value v, const std::shared_ptr<PySession>& s) {
  using K = embed::Value::Kind;
  switch (v.kind()) {
    case K::Unit:
      return py::none();
    case K::Int:
      return py::int_(v.as_int());
    case K::Float:
      return py::float_(v.as_float());
    case K::Bool:
      return py::bool_(v.as_bool());
    case K::Str:
      return py::str(v.as_str());
    case K::Tensor:
      return wrap_tensor(v.tensor());
    case K::Tuple: {
      std::vector<embed::Value> items = v.items();
      py::tuple t(items.size());
      for (size_t i = 0; i < items.size(); ++i) t[i] = to_python(items[i], s);
      return t;
    }
    case K::List: {
      py::list l;
      for (embed::Value& i : v.items()) l.append(to_python(i, s));
      return l;
    }
    default:
      return py::cast(PyValue{std::move(v), s});
  }
}

embed::Arg to_arg(const py::handle& obj, std::string kw) {
  if (py::isinstance<PyValue>(obj))
    return embed::Arg::of(obj.cast<PyValue&>().v, std::move(kw));
  if (py::isinstance<Text>(obj))
    return embed::Arg::of_text(obj.cast<Text&>().text, std::move(kw));
  if (py::isinstance<py::bool_>(obj))
    return embed::Arg::of_bool(obj.cast<bool>(), std::move(kw));
  if (py::isinstance<py::int_>(obj))
    return embed::Arg::of_int(obj.cast<int64_t>(), std::move(kw));
  if (py::isinstance<py::float_>(obj))
    return embed::Arg::of_float(obj.cast<double>(), std::move(kw));
  if (py::isinstance<py::str>(obj))
    return embed::Arg::of_str(obj.cast<std::string>(), std::move(kw));
  if (py::isinstance<py::tuple>(obj)) {
    embed::Arg a;
    a.kind = embed::Arg::Kind::Tuple;
    a.keyword = std::move(kw);
    for (py::handle i : obj) a.items.push_back(to_arg(i, ""));
    return a;
  }
  if (std::optional<ops::Tensor> t = tensor_from(obj))
    return embed::Arg::of_tensor(std::move(*t), std::move(kw));
  throw py::type_error(
      "cannot pass a " +
      std::string(py::str(py::type::of(obj).attr("__name__"))) +
      " to ShapeScript: give tensors (numpy, torch), numbers, "
      "strings, tuples, or values ShapeScript returned");
}

/// [obj] as a tensor, or a TypeError naming field [name].
ops::Tensor tensor_of(const py::handle& obj, const std::string& name) {
  if (std::optional<ops::Tensor> t = tensor_from(obj)) return *t;
  throw py::type_error("field `" + name + "`: a " +
                       py::type::of(obj).attr("__name__").cast<std::string>() +
                       " is not a tensor (give a numpy array or a torch "
                       "tensor)");
}

/// What a Python function raised, to be raised again as itself where
/// ShapeScript's error reaches Python (Note [Extern fns of a host
/// language]).
embed::HostException host_exception(py::error_already_set& e) {
  py::module_ ext = py::module_::import("shapescript._externs");
  std::string text = py::str(e.value()).cast<std::string>();
  std::string kind =
      py::type::of(e.value()).attr("__name__").cast<std::string>();
  std::string payload = ext.attr("payload")(e.value()).cast<std::string>();
  return embed::HostException(kind + (text.empty() ? "" : ": " + text),
                              payload);
}

/// Extern fns written in Python (python/shapescript/_externs.py), for
/// this process: the controller's at import, a worker's at its start.
void enable_externs() {
  embed::set_extern_call(
      [](const std::string& target, const std::vector<embed::Value>& args) {
        py::gil_scoped_acquire gil;
        py::module_ ext = py::module_::import("shapescript._externs");
        py::list given;
        for (const embed::Value& a : args) given.append(to_python(a, nullptr));
        try {
          return to_arg(ext.attr("call")(target, given), "");
        } catch (py::error_already_set& e) {
          if (e.matches(ext.attr("Unresolved")))
            throw std::runtime_error(py::str(e.value()).cast<std::string>());
          throw host_exception(e);
        }
      });
}

/// A dataset written in Python (python/shapescript/_datasets.py), read on
/// ShapeScript's loader threads, each taking the GIL for its batch.
class PyHostDataset : public embed::HostDataset {
 public:
  explicit PyHostDataset(py::object obj) : obj_(obj.release().ptr()) {}
  ~PyHostDataset() override {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(obj_);
  }

  std::vector<std::pair<std::string, ops::Tensor>> load(
      const std::vector<int64_t>& rows) const override {
    py::gil_scoped_acquire gil;
    std::vector<std::pair<std::string, ops::Tensor>> out;
    try {
      py::dict got = py::module_::import("shapescript._datasets")
                         .attr("load")(py::handle(obj_), rows);
      for (auto [k, v] : got) {
        std::string name = k.cast<std::string>();
        out.push_back({name, tensor_of(v, name)});
      }
    } catch (py::error_already_set& e) {
      throw host_exception(e);
    }
    return out;
  }

  std::string payload() const override {
    py::gil_scoped_acquire gil;
    return py::module_::import("shapescript._datasets")
        .attr("payload")(py::handle(obj_))
        .cast<std::string>();
  }

 private:
  PyObject* obj_;
};

void enable_host_datasets() {
  embed::set_host_dataset_maker([](const std::string& payload) {
    py::gil_scoped_acquire gil;
    py::object obj = py::module_::import("shapescript._datasets")
                         .attr("from_payload")(payload);
    return std::shared_ptr<const embed::HostDataset>(
        std::make_shared<PyHostDataset>(obj));
  });
}

/// Whether Ctrl-C came (Python's signal handlers run here, on the main
/// thread): the KeyboardInterrupt it raised is cleared, for ShapeScript to
/// stop its call and raise its own.
bool ctrl_c_seen() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() == 0) return false;
  PyErr_Clear();
  return true;
}

std::shared_ptr<PySession> load(const std::string& path,
                                const std::string& devices,
                                const std::map<std::string, int64_t>& dims,
                                bool deterministic,
                                const std::vector<std::string>& worker_command,
                                const std::vector<std::string>& worker_env) {
  auto s = std::make_shared<PySession>();
  embed::LoadOptions o;
  o.devices = devices;
  o.dims = dims;
  o.deterministic = deterministic;
  o.worker_command = worker_command;
  o.worker_env = worker_env;
  o.host_name = "<python>";
  {
    py::gil_scoped_release release;
    s->s = embed::Session::load(path, o, *s->out);
  }
  // Ctrl-C (Note [The GIL around ShapeScript]).
  embed::Session* raw = s->s.get();
  s->s->set_poll([raw] {
    if (ctrl_c_seen()) raw->interrupt();
  });
  return s;
}

py::object call(const std::shared_ptr<PySession>& s,
                const std::string& callee,
                const py::list& args,
                const py::list& kwargs,
                bool method) {
  std::vector<embed::Arg> a;
  for (py::handle x : args) a.push_back(to_arg(x, ""));
  for (py::handle kv : kwargs) {
    py::tuple t = py::reinterpret_borrow<py::tuple>(kv);
    a.push_back(to_arg(t[1], t[0].cast<std::string>()));
  }
  embed::Value out;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(s->mu);
    out = s->get().call(callee, std::move(a), method);
    s->out->flush();
  }
  return to_python(std::move(out), s);
}

/// `shapescript.check`: `ss check`'s problems, none when it checks.
py::list check(const std::string& path,
               const std::string& devices,
               const std::map<std::string, int64_t>& dims,
               bool deterministic) {
  embed::LoadOptions o;
  o.devices = devices;
  o.dims = dims;
  o.deterministic = deterministic;
  embed::CheckReport r;
  {
    py::gil_scoped_release release;
    r = embed::check(path, o);
  }
  return problems_of(r.problems);
}

/// `shapescript.run`: the whole program, as `ss run` runs it; its print in
/// sys.stdout, Ctrl-C a KeyboardInterrupt that ends it (and its workers).
void run(const std::string& path,
         const std::string& devices,
         const std::map<std::string, int64_t>& dims,
         bool deterministic,
         const std::string& entry,
         const std::vector<std::string>& args,
         const std::vector<std::string>& worker_command,
         const std::vector<std::string>& worker_env) {
  embed::RunOptions o;
  o.load.devices = devices;
  o.load.dims = dims;
  o.load.deterministic = deterministic;
  o.load.worker_command = worker_command;
  o.load.worker_env = worker_env;
  o.entry = entry;
  o.args = args;
  volatile int interrupted = 0;
  o.interrupt = &interrupted;
  o.poll = [&interrupted] {
    if (ctrl_c_seen()) interrupted = 1;
  };
  PythonStream out_buf("stdout"), err_buf("stderr");
  std::ostream out(&out_buf), err(&err_buf);
  {
    py::gil_scoped_release release;
    embed::run(path, o, out, err);
    out.flush();
    err.flush();
  }
}

}  // namespace

}  // namespace ss::python

using namespace ss;
using namespace ss::python;

PYBIND11_MODULE(_core, m) {
  m.doc() = "ShapeScript's compiled core; import `shapescript` instead.";
  embed::prepare();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const embed::CheckFailed& e) {
      raise_check_failed(e);
    } catch (const embed::Error& e) {
      raise_error(e);
    }
  });
  define_tensor(m);
  py::class_<Text>(m, "Text").def(py::init<std::string>());
  py::class_<PyValue>(m, "Value")
      .def_property_readonly("kind",
                             [](const PyValue& v) {
                               static const char* names[] = {"unit",
                                                             "int",
                                                             "float",
                                                             "bool",
                                                             "str",
                                                             "tensor",
                                                             "tuple",
                                                             "list",
                                                             "record",
                                                             "logs",
                                                             "model",
                                                             "optim",
                                                             "grads",
                                                             "mode",
                                                             "dataset",
                                                             "batches",
                                                             "sink",
                                                             "other"};
                               return names[static_cast<int>(v.v.kind())];
                             })
      .def_property_readonly("type",
                             [](const PyValue& v) { return v.v.type_text(); })
      .def_property_readonly("type_name",
                             [](const PyValue& v) { return v.v.type_name(); })
      .def_property_readonly("length",
                             [](const PyValue& v) { return v.v.length(); })
      .def_property_readonly("session",
                             [](const PyValue& v) { return v.session; })
      .def("entries", [](const PyValue& v) {
        py::list out;
        for (auto& [n, e] : v.v.entries())
          out.append(py::make_tuple(n, to_python(e, v.session)));
        return out;
      });
  py::class_<PyCursor>(m, "Cursor")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", [](PyCursor& c) {
        std::optional<embed::Value> v;
        {
          py::gil_scoped_release release;
          std::lock_guard<std::mutex> lock(c.session->mu);
          v = c.c->next();
          c.session->out->flush();
        }
        if (!v) throw py::stop_iteration();
        return to_python(std::move(*v), c.session);
      });
  py::class_<PySession, std::shared_ptr<PySession>>(m, "Session")
      .def_static("load",
                  &load,
                  py::arg("path"),
                  py::arg("devices") = "",
                  py::arg("dims") = std::map<std::string, int64_t>{},
                  py::arg("deterministic") = false,
                  py::arg("worker_command") = std::vector<std::string>{},
                  py::arg("worker_env") = std::vector<std::string>{})
      .def("fns", [](PySession& s) { return s.get().fns(); })
      .def("models", [](PySession& s) { return s.get().models(); })
      .def("records", [](PySession& s) { return s.get().records(); })
      .def("dims", [](PySession& s) { return s.get().dims(); })
      .def("params",
           [](PySession& s, const std::string& f) { return s.get().params(f); })
      .def("result",
           [](PySession& s, const std::string& f) { return s.get().result(f); })
      .def("devices", [](PySession& s) { return s.get().devices(); })
      .def("externs", [](PySession& s) { return s.get().externs(); })
      .def("call",
           &call,
           py::arg("callee"),
           py::arg("args"),
           py::arg("kwargs"),
           py::arg("method") = false)
      .def("field",
           [](const std::shared_ptr<PySession>& s,
              const PyValue& v,
              const std::string& name) {
             embed::Value out;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(s->mu);
               out = s->get().field(v.v, name);
             }
             return to_python(std::move(out), s);
           })
      .def("state_dict",
           [](const std::shared_ptr<PySession>& s, const PyValue& v) {
             std::vector<std::pair<std::string, ops::Tensor>> out;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(s->mu);
               out = s->get().state_dict(v.v);
             }
             py::dict d;
             for (auto& [k, t] : out) d[py::str(k)] = wrap_tensor(t);
             return d;
           })
      .def("iterate",
           [](const std::shared_ptr<PySession>& s, const PyValue& v) {
             PyCursor c;
             c.session = s;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(s->mu);
               c.c = s->get().iterate(v.v);
             }
             return c;
           })
      .def("tensor_dataset",
           [](const std::shared_ptr<PySession>& s,
              const std::string& record,
              const py::dict& fields) {
             std::vector<std::pair<std::string, ops::Tensor>> whole;
             std::vector<std::pair<std::string, std::vector<ops::Tensor>>>
                 per_item;
             for (auto [k, v] : fields) {
               std::string name = k.cast<std::string>();
               if (py::isinstance<py::list>(v)) {
                 auto& items =
                     per_item.emplace_back(name, std::vector<ops::Tensor>{})
                         .second;
                 for (py::handle i : v) items.push_back(tensor_of(i, name));
               } else {
                 whole.push_back({name, tensor_of(v, name)});
               }
             }
             embed::Value out;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(s->mu);
               out = s->get().tensor_dataset(
                   record, std::move(whole), std::move(per_item));
             }
             return to_python(std::move(out), s);
           })
      .def("host_dataset",
           [](const std::shared_ptr<PySession>& s,
              const std::string& record,
              int64_t n,
              py::object obj) {
             auto src = std::make_shared<PyHostDataset>(obj);
             embed::Value out;
             {
               py::gil_scoped_release release;
               std::lock_guard<std::mutex> lock(s->mu);
               out = s->get().host_dataset(record, n, std::move(src));
             }
             return to_python(std::move(out), s);
           })
      .def("close", [](PySession& s) {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(s.mu);
        s.s.reset();
      });
  m.def("check",
        &check,
        py::arg("path"),
        py::arg("devices") = "",
        py::arg("dims") = std::map<std::string, int64_t>{},
        py::arg("deterministic") = false);
  m.def("run",
        &run,
        py::arg("path"),
        py::arg("devices"),
        py::arg("dims"),
        py::arg("deterministic"),
        py::arg("entry"),
        py::arg("args"),
        py::arg("worker_command"),
        py::arg("worker_env"));
  m.def("cuda_device_count", [] { return ss::ops::cuda_device_count(); });
  m.def("_set_error_classes", [](py::dict d) { error_classes() = d; });
  m.def("_set_progress", [](const std::string& how) {
    // Kept for the process's life, as the setting is.
    static auto* buf = new PythonStream("stderr");
    static auto* err = new std::ostream(buf);
    embed::set_progress_output(
        err,
        how == "terminal"   ? embed::ProgressDrawing::Terminal
        : how == "notebook" ? embed::ProgressDrawing::Notebook
                            : embed::ProgressDrawing::Summary);
  });
  m.def("_enable_externs", [] {
    enable_externs();
    enable_host_datasets();
  });
  m.def("worker_main", [](const std::vector<std::string>& args) {
    py::gil_scoped_release release;
    return embed::worker_main(args);
  });
}

// Linked instead of ops/no_cuda/stubs.cpp when ss is built with the CUDA
// module (style.md §9: absent backends are linked stubs, not #ifdefs).
//
// Note [The CUDA module is loaded on demand]
// The CUDA backend (ops/cuda) is a shared module, libss_cuda.so beside the
// executable, opened the first time a program asks for a GPU. Linking
// cuBLAS and the CUDA runtime into ss itself costs every process 0.4 s at
// start (measured: an empty main linked with -lcublas, 0.40 s against
// 0.003 s), and the conformance suite starts ss thousands of times, most
// never touching a GPU. The module is linked against no copy of ss_ops: its
// calls into Tensor, Storage and the rest resolve to the executable's own
// (ss and the test binaries export their symbols, ENABLE_EXPORTS), so there
// is one allocator registry, one error type, one everything.

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/backend/backend.h"

namespace ss::ops {

namespace {

std::string dir_of(std::string path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.erase(slash + 1);
}

// SS_CUDA_MODULE, else libss_cuda.so beside the image that holds this
// loader (ss, a test binary), two folders up from it (the Python module,
// build/python/shapescript/), or beside the executable.
std::string module_path() {
  if (const char* p = std::getenv("SS_CUDA_MODULE"); p && *p) return p;
  std::vector<std::string> dirs;
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&cuda_backend), &self) && self.dli_fname) {
    const std::string here = dir_of(self.dli_fname);
    dirs.push_back(here);
    dirs.push_back(here + "../../");
  }
  char exe[4096];
  if (ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1); n > 0)
    dirs.push_back(dir_of(std::string(exe, static_cast<size_t>(n))));
  for (const std::string& d : dirs)
    if (access((d + "libss_cuda.so").c_str(), R_OK) == 0)
      return d + "libss_cuda.so";
  return dirs.empty() ? "libss_cuda.so" : dirs.back() + "libss_cuda.so";
}

using Entry = Backend* (*)(char* error, unsigned long error_size);

// The module, opened once; its entry has made the backend (or said why
// not).
struct Module {
  void* handle = nullptr;
  Backend* backend = nullptr;
  std::string error;
};

const Module& module() {
  static std::once_flag once;
  static Module m;
  std::call_once(once, [] {
    // The module's calls resolve to the image that opens it: ss and the
    // test binaries export their symbols; the Python module is opened by
    // Python with its symbols local, so it offers them to the module
    // first (a no-op for an executable).
    Dl_info self{};
    if (dladdr(reinterpret_cast<void*>(&cuda_backend), &self) && self.dli_fname)
      dlopen(self.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    const std::string path = module_path();
    m.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!m.handle) {
      const char* why = dlerror();
      m.error = "the CUDA backend could not be loaded from " + path + ": " +
                (why ? why : "unknown error");
      return;
    }
    auto entry = reinterpret_cast<Entry>(dlsym(m.handle, "ss_cuda_backend"));
    if (!entry) {
      m.error = path + " is not ShapeScript's CUDA module (no ss_cuda_backend)";
      return;
    }
    char why[512] = {};
    m.backend = entry(why, sizeof why);
    if (!m.backend) m.error = why;
  });
  return m;
}

}  // namespace

Backend& cuda_backend() {
  const Module& m = module();
  if (!m.backend) throw std::runtime_error(m.error);
  return *m.backend;
}

void use_cuda_device(int index) {
  using Use = void (*)(int);
  static const Use use =
      reinterpret_cast<Use>(cuda_module_symbol("ss_cuda_use_device"));
  use(index);
}

std::string cuda_kernel_signature(int index) {
  using Sign = void (*)(int, char*, unsigned long);
  static const Sign sign =
      reinterpret_cast<Sign>(cuda_module_symbol("ss_cuda_kernel_signature"));
  char s[512] = {};
  sign(index, s, sizeof s);
  return s;
}

int cuda_device_count() {
  if (!module().backend) return 0;
  using Count = int (*)();
  return reinterpret_cast<Count>(cuda_module_symbol("ss_cuda_device_count"))();
}

void* cuda_module_symbol(const char* name) {
  const Module& m = module();
  if (!m.backend) throw std::runtime_error(m.error);
  void* f = dlsym(m.handle, name);
  if (!f)
    throw std::runtime_error(module_path() + " has no " + name +
                             " (a CUDA module of another build)");
  return f;
}

}  // namespace ss::ops

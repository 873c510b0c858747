// Instances' threads and their merged prints (instance_threads.h).
#include "interp/eval/spmd/instance_threads.h"

#include <pthread.h>

#include <algorithm>

#include "interp/eval/spmd/instance_output.h"

namespace ss::eval::spmd {

namespace {

constexpr size_t kInstanceStack = size_t(256) << 20;

struct Start {
  const std::function<void(int64_t)>* body;
  int64_t n;
};

void* thread_main(void* p) {
  auto* s = static_cast<Start*>(p);
  (*s->body)(s->n);
  return nullptr;
}

}  // namespace

void run_instance_threads(SimMesh& mesh,
                          const std::function<void(int64_t)>& body,
                          const std::function<void(int64_t)>& failed) {
  const int64_t count = mesh.instances();
  std::vector<Start> starts;
  for (int64_t n = 0; n < count; ++n) starts.push_back({&body, n});
  std::vector<pthread_t> threads(count);
  std::vector<bool> started(count, false);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kInstanceStack);
  for (int64_t n = 0; n < count; ++n) {
    started[n] =
        pthread_create(&threads[n], &attr, thread_main, &starts[n]) == 0;
    if (!started[n]) {
      failed(n);
      mesh.finished(n, true);
    }
  }
  pthread_attr_destroy(&attr);
  for (int64_t n = 0; n < count; ++n)
    if (started[n]) pthread_join(threads[n], nullptr);
}

void merge_prints(std::ostream& out,
                  const SimMesh& mesh,
                  const std::vector<std::vector<std::string>*>& entries) {
  size_t most = 0;
  for (const auto* e : entries) most = std::max(most, e->size());
  for (size_t k = 0; k < most; ++k)
    for (size_t n = 0; n < entries.size(); ++n)
      if (k < entries[n]->size())
        out << prefixed((*entries[n])[k], "[" + mesh.label(int64_t(n)) + "] ");
  out << std::flush;
}

}  // namespace ss::eval::spmd

// Instances' threads (instance_threads.h).
#include "interp/eval/spmd/instance_threads.h"

#include <pthread.h>

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

}  // namespace ss::eval::spmd

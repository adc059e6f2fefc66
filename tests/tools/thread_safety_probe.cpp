// The probe of ctest thread_safety_probe (tests/tools/thread_safety_probe.cmake): proof that clang's
// -Wthread-safety checks cronwheel::Mutex (base/include/cronwheel/mutex.hpp). Compiled twice, never linked:
// as it is, Read() reads a field ABSL_GUARDED_BY(mu_) without holding mu_, and the compile must fail; with
// -DPROBE_LOCKED, Read() takes the lock first, and the same compile must succeed (so the first failure was
// the analysis, not a bad include path or flag).

#include "cronwheel/mutex.hpp"

namespace cronwheel::probe {

class Counter {
 public:
  int Read() {
#ifdef PROBE_LOCKED
    const MutexLock lock(mu_);
#endif
    return value_;
  }

 private:
  Mutex mu_;
  int value_ ABSL_GUARDED_BY(mu_) = 0;
};

int ReadOnce() {
  Counter counter;
  return counter.Read();
}

}  // namespace cronwheel::probe

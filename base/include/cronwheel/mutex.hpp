#pragma once
// cwbase (base/): the mutex of every class that shares state between threads, with the capability
// attributes of clang's thread-safety analysis (-Wthread-safety, on for clang in cmake/Warnings.cmake).
//
// A field a mutex guards is declared ABSL_GUARDED_BY(mu_); a private helper that expects the lock held,
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_); a stated lock order, ABSL_ACQUIRED_AFTER/ABSL_ACQUIRED_BEFORE (the
// macros of absl/base/thread_annotations.h). clang then refuses, at compile time, a read or write of a
// guarded field without its lock (docs/architecture.md, "Decisions, and why"). libstdc++'s std::mutex
// carries no such attributes, so with it the analysis checks nothing; hence this thin wrapper.
//
// Why not absl::Mutex, which is annotated already: Debian's libabsl is not built with ThreadSanitizer, so
// TSAN would not see the happens-before edges of absl::Mutex and would report false races in the tsan
// preset; std::mutex is pthread's, which TSAN intercepts. Mutex is a std::mutex with the attributes on.
//
//   mutable cronwheel::Mutex mu_;
//   std::condition_variable cv_;
//   std::deque<Job> queue_ ABSL_GUARDED_BY(mu_);
//   ...
//   cronwheel::MutexLock lock(mu_);
//   cv_.wait(lock.native(), [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !queue_.empty(); });
//
// Thread-safety: Mutex is a mutex (not recursive); a MutexLock belongs to the thread that made it.

#include <absl/base/thread_annotations.h>

#include <mutex>

namespace cronwheel {

// A std::mutex that clang's thread-safety analysis knows as a capability.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  // True when the lock was taken (then the caller holds it), false at once when another thread holds it.
  bool TryLock() ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) { return mu_.try_lock(); }
  // Tells the analysis that the calling thread holds the lock; a std::mutex cannot tell its owner, so
  // nothing is checked at run time.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class MutexLock;
  std::mutex mu_;
};

// Holds a Mutex for its scope (RAII), like std::unique_lock: Unlock() and Lock() release and take it again
// within the scope, and the analysis follows both. native() is the std::unique_lock underneath, for
// std::condition_variable's waits (which release the lock while they wait and hold it again on return).
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : lock_(mu.mu_) {}
  ~MutexLock() ABSL_UNLOCK_FUNCTION() = default;
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() ABSL_UNLOCK_FUNCTION() { lock_.unlock(); }
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { lock_.lock(); }

  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

}  // namespace cronwheel

#pragma once
// The state JobDispatcher (job_dispatcher.hpp) keeps of a fire, of a job's thread and of a pool thread,
// shared by its source files (job_dispatcher.cpp, job_dispatcher_held.cpp, job_dispatcher_kill.cpp). Private
// to executor/src; guarded as each member says.
#include <deque>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "job_dispatcher.hpp"

namespace cronwheel::executor {

struct JobDispatcher::Fire {
  xxljob::TriggerParam param;
  std::stop_source stop;
  std::int64_t received_ms = 0;  // when /run brought it (epoch ms)
  std::int64_t started_ms = 0;   // when a worker took it to run; 0 = not started (guarded by mu_)
  bool claimed = false;          // its result has been reported (guarded by mu_)
  Timer::Handle timeout;         // used by the job thread only
};

// A job's "thread" in XXL-JOB's words: its handler and its FIFO queue of fires. Its fires run on the
// worker pool, one at a time: it is in ready_ (or on a worker) while `scheduled`.
struct JobDispatcher::JobThread {
  int job_id = 0;
  std::string identity;
  JobHandler handler;
  // Guarded by mu_:
  std::deque<std::shared_ptr<Fire>> queue;
  std::shared_ptr<Fire> running;
  bool stop = false;
  bool scheduled = false;              // in ready_ or being run by a worker
  std::uint64_t serial = 0;            // unique per object: names it to the idle timer
  bool idle_armed = false;             // an idle check is pending on the timer
  ringwheel::SteadyTime idle_since{};  // when its queue last ran empty
  Timer::Handle idle_timer;
};

// A pool thread. Guarded by mu_.
struct JobDispatcher::Worker {
  std::jthread thread;
  bool busy = false;
  ringwheel::SteadyTime busy_since{};
  bool exited = false;
};

}  // namespace cronwheel::executor

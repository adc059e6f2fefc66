#pragma once
// The seams a fire crosses between the admin's stages (docs/architecture.md, "The life of one fire"), as
// interfaces free of libpqxx and HTTP, so each stage is tested on its own with a fake on the other side:
//
//   Scheduler --FireSink--> TriggerPools --FireTrigger--> TriggerService --TriggerRecorder--> job_log
//
// Thread-safety: implementations are called from several threads (the ring thread, the trigger pools'
// workers); each says what it guarantees.

#include <functional>
#include <span>
#include <vector>

#include "admin/model/fire.hpp"

namespace cronwheel::admin {

// Where claimed fires go: the trigger pools. Dispatch must not block (a full pool records the fire as
// failed instead).
class FireSink {
 public:
  virtual ~FireSink() = default;
  virtual void Dispatch(std::vector<Fire> fires) = 0;

 protected:
  FireSink() = default;
  FireSink(const FireSink&) = default;
  FireSink& operator=(const FireSink&) = default;
};

// What the trigger pools call for each fire (TriggerService in production; a recorder in unit tests).
class FireTrigger {
 public:
  // Runs once the outcome of one Trigger call is recorded (or the fire is handed back to be sent again).
  using Done = std::function<void()>;
  virtual ~FireTrigger() = default;
  // Sends `fire` and records the outcome; `done` (may be empty) runs once that is finished: before Trigger
  // returns when the outcome is known at once (no executor, a fake), or later on the executor client's
  // thread when it is the executor's answer. A caller never waits for the network. Must not throw.
  virtual void Trigger(const Fire& fire, Done done) = 0;
  // Warms caches for a batch about to be triggered (optional).
  virtual void Prefetch(std::span<const Fire> /*fires*/) {}

 protected:
  FireTrigger() = default;
  FireTrigger(const FireTrigger&) = default;
  FireTrigger& operator=(const FireTrigger&) = default;
};

// Where trigger outcomes go: batched onto their job_log rows (store/trigger_result_writer.hpp). Record
// must not block on the database.
class TriggerRecorder {
 public:
  virtual ~TriggerRecorder() = default;
  virtual void Record(TriggerResult result) = 0;

 protected:
  TriggerRecorder() = default;
  TriggerRecorder(const TriggerRecorder&) = default;
  TriggerRecorder& operator=(const TriggerRecorder&) = default;
};

}  // namespace cronwheel::admin

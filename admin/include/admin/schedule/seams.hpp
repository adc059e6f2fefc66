#pragma once
// The seams a fire crosses between the admin's stages (docs/architecture.md, "The life of one fire"), as
// interfaces free of libpqxx and HTTP, so each stage is tested on its own with a fake on the other side:
//
//   Scheduler --FireSink--> TriggerPools --FireTrigger--> TriggerService --TriggerRecorder--> job_log
//
// Thread-safety: implementations are called from several threads (the ring thread, the trigger pools'
// workers); each says what it guarantees.

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
  virtual ~FireTrigger() = default;
  // Sends `fire` and records the outcome. Must not throw.
  virtual void Trigger(const Fire& fire) = 0;
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

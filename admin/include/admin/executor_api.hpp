#pragma once
// What executors call on the admin (xxl-job-protocol.md §3): registry heartbeats and results.
//
// RegistryService: upsert on heartbeat (`registryValue` normalised so "http://h:1" and "http://h:1/" are
// one executor), delete on registryRemove, and expiry of registrations older than `dead_after` (90 s).
//
// CallbackService: records each fire's result in one transaction per callback batch:
//  * handle_code, handle_msg (truncated to 15,000 characters as XXL-JOB), handle_ms; a callback for a fire
//    that already has a result is ignored (XXL-JOB "log repeate callback"), as is an unknown log id;
//  * on success, the job's child jobs are triggered (new rows of type PARENT, parent_log_id set) in the
//    same transaction, so a crash cannot lose them; a child that appears in its own ancestry (a cycle
//    created by racing edits) is refused at run time with a message on the parent's row;
//  * a FIX_DELAY job's next fire becomes finish + delay.
// Failures are handled by the failure monitor (retries with back-off, alarms).
//
// Thread-safety: safe from any thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "admin/fire.hpp"
#include "admin/pg_pool.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

class RegistryService {
 public:
  RegistryService(ringwheel::Clock& clock, PgPool& pool,
                  std::chrono::milliseconds dead_after = std::chrono::seconds(90));
  void Register(const xxljob::RegistryParam& p);
  void Remove(const xxljob::RegistryParam& p);
  // Deletes registrations not renewed within dead_after; returns how many.
  std::size_t ExpireDead();
  // The access token executors of `app_name` must present: the group's own, else nullopt (use the global).
  std::optional<std::string> GroupToken(const std::string& app_name);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
  std::chrono::milliseconds dead_after_;
};

class CallbackService {
 public:
  // Receives fires created by callbacks (child jobs) after their commit, to be sent.
  using Submit = std::function<void(std::vector<Fire>)>;
  CallbackService(ringwheel::Clock& clock, PgPool& pool, std::string node_id, Submit submit);

  struct Outcome {
    int recorded = 0;  // results written
    int ignored = 0;   // repeats and unknown log ids
    int children = 0;  // child fires created
  };
  // Throws on database failure (the executor keeps the batch and retries).
  Outcome Handle(std::span<const xxljob::HandleCallbackParam> callbacks);

  // Whether `token` may report results for these fires: the global token, or the token of every fire's
  // group. Groups without their own token require the global one.
  bool Authorized(std::span<const xxljob::HandleCallbackParam> callbacks, const std::string& token,
                  const std::string& global_token);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
  std::string node_id_;
  Submit submit_;
};

}  // namespace cronwheel::admin

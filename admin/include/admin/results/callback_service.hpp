#pragma once
// Results reported by executors (docs/xxl-job-protocol.md §3 "callback", §11 "Callback processing"),
// recorded in one transaction per callback batch (ResultStore::RecordCallbacks):
//  * handle_code, handle_msg (cut to 15,000 bytes on a UTF-8 boundary, as XXL-JOB cuts at 15,000
//    characters), handle_ms, and start_ms when the executor reported when it started the fire (cronwheel's
//    handleStartTime extension); a callback for a fire that already has a result is ignored (XXL-JOB "log
//    repeate callback"), as is an unknown log id;
//  * on success, the job's child jobs are triggered (new rows of type PARENT, parent_log_id set) in the
//    same transaction, so a crash cannot lose them; a child that appears in its own ancestry (a cycle
//    created by racing edits) is not triggered again, nor is a stopped child (the parent's note names it;
//    store/fire_log.hpp, InsertChildren);
//  * a FIX_DELAY job waiting for this run gets its next fire (schedule/next_fire.hpp);
//  * the fire output archive (docs/operations.md, "The fire output archive"): the fire's job log the callback
//    carries (the jobLog extension) is archived within `OutputSettings::max_bytes`
//    (results/output_puller.hpp, KeepLog), in the same statement; a fire whose callback carries none is
//    queued for the output puller, due `pull_delay` later. Also for a fire that has its result already
//    (killed from the console first): its log is archived once.
// Failures are handled by the failure monitor (retries with back-off, alarms).
//
// Thread-safety: safe from any thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "admin/model/fire.hpp"
#include "admin/results/result_store.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::admin {

// The fire output archive's settings of CallbackService (AdminConfig output_archive_max_bytes).
struct CallbackOutputSettings {
  // Which fires whose callback brings no log (XXL-JOB's executors) have it read from the executor's /log:
  // every fire, only those that did not succeed (handle code other than 200), or none. Each pull is an HTTP
  // exchange with the executor and a row in PostgreSQL, as much as the fire's own trigger: at thousands of
  // fires a second, pulling every fire's log costs the admin and the database about a third more per fire
  // (docs/performance.md, "The fire output archive at saturation"), so the admin's default is kFailed.
  enum class Pull { kAll, kFailed, kNone };
  std::size_t max_bytes = std::size_t{1024} * 1024;  // 0 = no archive: logs are neither kept nor pulled
  std::chrono::milliseconds pull_delay{1000};        // a fire without a log is pulled this long after
  Pull pull = Pull::kAll;
};

class CallbackService {
 public:
  // Receives fires created by callbacks (child jobs) after their commit, to be sent.
  using Submit = std::function<void(std::vector<Fire>)>;
  using OutputSettings = CallbackOutputSettings;
  CallbackService(ringwheel::Clock& clock, ResultStore& store, std::string node_id, Submit submit,
                  OutputSettings output = {});

  struct Outcome {
    int recorded = 0;  // results written
    int ignored = 0;   // repeats and unknown log ids
    int children = 0;  // child fires created
    // For each CRON fire recorded with the executor's start instant: start − scheduled instant, in ms (the
    // executor's clock against the admin's; negative if the executor's clock is behind).
    std::vector<std::int64_t> start_lags_ms;
    int logs_archived = 0;   // job logs that came with their results, stored whole (or already stored)
    int logs_truncated = 0;  // ... stored with their middle left out (by the executor or here)
  };
  // Throws on the store's failure (the executor keeps the batch and retries).
  Outcome Handle(std::span<const xxljob::HandleCallbackParam> callbacks);

  // Whether `token` may report results for these fires: for every fire, the token of its group, or the
  // global one when the group has none (as registration: a group's own token replaces the global one for its
  // executors). A log id no fire has needs the global token. A batch whose fires need different tokens is
  // refused whole.
  bool Authorized(std::span<const xxljob::HandleCallbackParam> callbacks, const std::string& token,
                  const std::string& global_token);

 private:
  ringwheel::Clock& clock_;
  ResultStore& store_;
  std::string node_id_;
  Submit submit_;
  OutputSettings output_;
};

}  // namespace cronwheel::admin

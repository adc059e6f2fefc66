#pragma once
// The executor's API without HTTP: maps one call (path after any prefix, and body) to an envelope. The
// HTTP server (http_server.hpp) checks the method, the body size and the token and then calls Handle();
// unit tests call Handle() directly.
//
// Thread-safety: Handle() may be called from many threads at once.

#include <atomic>
#include <functional>
#include <string_view>

#include "job_dispatcher.hpp"
#include "job_log.hpp"
#include "metrics.hpp"
#include "ringwheel/clock.hpp"
#include "xxljob/protocol.hpp"

namespace cronwheel::executor {

class ExecutorService final {
 public:
  // `metrics` (optional) counts the /runs by result. (The run trace is the dispatcher's: it knows when a
  // fire starts.) `drain_request` (optional) starts a drain when an admin asks for one (POST /drain); it
  // must return at once (the drain runs elsewhere).
  ExecutorService(JobDispatcher& dispatcher, JobLogFiles& logs, ExecutorMetrics* metrics = nullptr,
                  std::function<void()> drain_request = nullptr)
      : dispatcher_(dispatcher), logs_(logs), metrics_(metrics), drain_request_(std::move(drain_request)) {}

  // `method` is "/beat", "/idleBeat", "/run", "/trigger", "/kill", "/log" or "/drain" (cronwheel's: starts
  // a drain, xxljob::kDrainStartedMsg; 500 kNoDrainRequestsMsg without `drain_request`); anything else is
  // 500 "invalid request, uri-mapping(<uri>) not found." (`uri` is what the client asked for).
  xxljob::Envelope Handle(std::string_view method, std::string_view body, std::string_view uri);
  // A request the HTTP server refused for a wrong access token (counted).
  void Unauthorized() const {
    if (metrics_ != nullptr) metrics_->unauthorized.Inc();
  }

 private:
  // One /run (or one run of a /runs batch): its answer, counted.
  xxljob::Envelope RunOne(const absl::StatusOr<xxljob::TriggerParam>& p);

  JobDispatcher& dispatcher_;
  JobLogFiles& logs_;
  ExecutorMetrics* metrics_;
  std::function<void()> drain_request_;
  std::atomic<bool> drain_requested_{false};
};

}  // namespace cronwheel::executor

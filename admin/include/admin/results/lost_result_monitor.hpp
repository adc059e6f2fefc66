#pragma once
// Lost results (XXL-JOB's JobCompleteHelper, docs/xxl-job-protocol.md §11), every minute. A fire RUNNING
// for more than `lost_after` (10 minutes) on an executor that is gone gets handle_code 500 "Job result
// lost, marked as failure" (then the failure monitor retries and alarms). "Gone" for an AUTO group: its
// address is not in the live registry; for a MANUAL group: its /beat does not answer 200 (XXL-JOB compares
// with the registry for both and so fails healthy long runs of manual groups, §15 item 5).
//
// Thread-safety: RunOnce is called from one thread at a time.

#include <chrono>
#include <string>

#include "admin/dispatch/executor_client.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/results/result_store.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

class LostResultMonitor {
 public:
  LostResultMonitor(ringwheel::Clock& clock, ResultStore& store, JobCatalog& catalog, ExecutorClient& client,
                    std::string global_token,
                    std::chrono::milliseconds lost_after = std::chrono::minutes(10));
  // Returns the number of fires marked lost.
  int RunOnce();

 private:
  ringwheel::Clock& clock_;
  ResultStore& store_;
  JobCatalog& catalog_;
  ExecutorClient& client_;
  std::string global_token_;
  std::chrono::milliseconds lost_after_;
};

}  // namespace cronwheel::admin

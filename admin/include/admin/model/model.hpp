#pragma once
// The admin's domain values: job groups, jobs, fires (job-log rows), and the enumerations, spelled on
// the wire and in the database exactly as XXL-JOB spells them (docs/xxl-job-protocol.md §4-§10).
// Instants are epoch milliseconds (`*_ms`); user-facing durations are whole seconds (`*_s`).
// Plain values; no thread-safety concerns.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "xxljob/vocabulary.hpp"

namespace cronwheel::admin {

// XXL-JOB's enumerations, shared with the executor (xxljob/vocabulary.hpp).
using xxljob::AddressType;
using xxljob::BlockStrategy;
using xxljob::GlueType;
using xxljob::MisfireStrategy;
using xxljob::ParseAddressType;
using xxljob::ParseBlockStrategy;
using xxljob::ParseGlueType;
using xxljob::ParseMisfireStrategy;
using xxljob::ParseRouteStrategy;
using xxljob::ParseTriggerType;
using xxljob::RouteStrategy;
using xxljob::Title;
using xxljob::ToString;
using xxljob::TriggerType;
using xxljob::ValidValues;

// An executor group (table job_group).
struct JobGroup {
  int id = 0;
  std::string app_name;
  std::string title;
  AddressType address_type = AddressType::kAuto;
  std::vector<std::string> addresses;  // configured (MANUAL groups)
  std::optional<std::string> access_token;
  std::vector<int> alert_channel_ids;  // alerted for every job of the group (admin/model/alert_channel.hpp)
  // Whether the group's DEVELOPERs may create and change script jobs (glue types but BEAN); set by a global
  // ADMIN (sql/022_group_scripts.sql). A global ADMIN may anywhere.
  bool allow_scripts = false;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

// How many fires of one job may run at once across the whole cluster (job.concurrency_policy and
// job.max_concurrent, sql/013_concurrency.sql; docs/operations.md, "Concurrency across the cluster"). The
// admin enforces it from the database when it claims a fire for sending, so two admins agree; a fire over
// the limit is recorded SKIPPED naming the fire still running. The executor's block strategy, which holds
// only inside one executor, is unchanged. The names follow Kubernetes' CronJob concurrencyPolicy (Allow,
// Forbid) and dkron's `concurrency: forbid`.
enum class ConcurrencyPolicy {
  kAllow,   // any number at once, or at most max_concurrent when that is above 0 (XXL-JOB's behaviour)
  kForbid,  // no new fire while one of the job is claimed, being sent or running anywhere
};
inline constexpr int kMaxConcurrentLimit = 1000;  // the largest max_concurrent
std::string_view ToString(ConcurrencyPolicy p);
std::optional<ConcurrencyPolicy> ParseConcurrencyPolicy(std::string_view s);
std::string ValidValues(ConcurrencyPolicy);  // "ALLOW, FORBID"

// A job (table job).
// Size limits of a job's text fields, in bytes: the REST API refuses longer values with a 400 naming the
// field.
inline constexpr std::size_t kMaxJobParamBytes = std::size_t{64} * 1024;
inline constexpr std::size_t kMaxGlueSourceBytes = std::size_t{1024} * 1024;

struct Job {
  int id = 0;
  int group_id = 0;
  std::string description;
  std::string author;
  std::string alarm_email;
  std::string alarm_webhook;
  std::string schedule_type = "NONE";  // CRON, FIX_RATE, FIX_DELAY, NONE (ringwheel::ScheduleType)
  std::string schedule_conf;
  std::string time_zone = "UTC";
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;
  RouteStrategy route_strategy = RouteStrategy::kFirst;
  std::string handler;
  std::string param;
  BlockStrategy block_strategy = BlockStrategy::kSerialExecution;
  int timeout_s = 0;
  int retry_count = 0;
  int retry_backoff_s = 10;
  GlueType glue_type = GlueType::kBean;
  std::string glue_source;
  std::string glue_remark;
  std::int64_t glue_updated_ms = 0;
  std::vector<int> child_job_ids;
  std::vector<std::string> tags;       // lower case, no duplicates, in the order given (CheckJobTags)
  std::vector<int> alert_channel_ids;  // alerted on a failure, besides the group's
  // Its calendars and active window (ringwheel/calendar.hpp): it fires only at instants from start_ms to
  // end_ms (inclusive; 0 = no bound) that none of the calendars excludes.
  std::vector<int> calendar_ids;
  std::int64_t start_ms = 0;
  std::int64_t end_ms = 0;
  // Fires of this job running at once anywhere in the cluster: FORBID = one; ALLOW = max_concurrent when
  // above 0, else no limit (ConcurrencyPolicy).
  ConcurrencyPolicy concurrency_policy = ConcurrencyPolicy::kAllow;
  int max_concurrent = 0;  // 0 .. kMaxConcurrentLimit; 0 = no limit
  bool enabled = false;
  std::int64_t next_fire_ms = 0;
  std::int64_t last_fire_ms = 0;
  std::string stop_reason;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

// Whether two versions of a job fire at the same instants: schedule, time zone, calendars and window. A
// change withdraws the fires written for the old one (JobService::UpdateJob, catalog/job_service.hpp).
inline bool SameSchedule(const Job& a, const Job& b) {
  return a.schedule_type == b.schedule_type && a.schedule_conf == b.schedule_conf &&
         a.time_zone == b.time_zone && a.calendar_ids == b.calendar_ids && a.start_ms == b.start_ms &&
         a.end_ms == b.end_ms;
}

// What of a job's /run differs between `a` and `b` ("parameter", "handler", "block strategy", "timeout",
// "script"), comma-separated; empty when a fire sent to an executor would be the same.
inline std::string ChangedForExecutor(const Job& a, const Job& b) {
  std::string out;
  const auto add = [&out](bool differs, const char* what) {
    if (differs) out += (out.empty() ? "" : ", ") + std::string(what);
  };
  add(a.param != b.param, "parameter");
  add(a.handler != b.handler, "handler");
  add(a.block_strategy != b.block_strategy, "block strategy");
  add(a.timeout_s != b.timeout_s, "timeout");
  add(a.glue_type != b.glue_type || a.glue_source != b.glue_source || a.glue_updated_ms != b.glue_updated_ms,
      "script");
  return out;
}

// One fire (table job_log). trigger_code 0 = not triggered yet; handle_code 0 = no result yet.
struct JobLog {
  std::int64_t id = 0;
  int job_id = 0;
  int group_id = 0;
  TriggerType trigger_type = TriggerType::kCron;
  std::int64_t scheduled_ms = 0;
  std::string owner_node;
  std::string executor_address;
  std::string executor_handler;
  std::string executor_param;
  int shard_index = 0;
  int shard_total = 1;
  int retry_count = 0;
  std::optional<std::int64_t> parent_log_id;
  std::int64_t dispatch_ms = 0;
  std::int64_t trigger_ms = 0;
  int trigger_code = 0;
  std::string trigger_msg;
  std::int64_t handle_ms = 0;
  std::int64_t start_ms = 0;  // when the executor started it (its clock, its callback); 0 = not reported
  int handle_code = 0;
  std::string handle_msg;
  int alarm_status = 0;
  bool skipped = false;
  std::optional<std::string> output;  // the handler's output, compact JSON; nullopt = none
  std::int64_t created_ms = 0;
  std::string status;  // PENDING, RUNNING, SUCCESS, FAILED, SKIPPED (derived in the database)
};

// What the admin archived of a fire's job log (table fire_output, sql/029_fire_output.sql;
// docs/operations.md, "The fire output archive"), or where its archiving stands.
struct FireOutputArchive {
  enum class State {
    kNone,      // nothing archived, nothing queued (running, never sent, lost, or from before the archive)
    kPending,   // queued: the admin reads it from the executor's /log (attempts so far, last_error)
    kArchived,  // stored: content
    kFailed,    // it could not be read: error
  };
  State state = State::kNone;
  std::string via;               // push | pull (kArchived, kFailed)
  std::int64_t archived_ms = 0;  // when it was stored (kArchived, kFailed)
  std::int64_t log_bytes = 0;    // the whole log's size on the executor
  std::int64_t left_out = 0;     // bytes of it not stored (the middle of a log over the cap)
  std::string content;           // the text kept (kArchived)
  std::string error;             // why not (kFailed), or why the last pull failed (kPending)
  int attempts = 0;              // pulls tried (kPending)
};
// "none", "pending", "archived", "failed" (the API's archive.state).
const char* StateName(FireOutputArchive::State state);

// A request to fire a job once at an instant (table run_once, sql/009_run_once.sql; docs/operations.md, "Run
// once"). It waits until the scan of its job's schedule partition writes it as a MANUAL fire (log_id), or
// until it is cancelled (cancelled_ms): never both.
struct RunOnce {
  std::int64_t id = 0;
  int job_id = 0;
  std::int64_t fire_at_ms = 0;       // the instant it is to fire
  std::optional<std::string> param;  // nullopt = the job's own parameter when it fires
  std::int64_t log_id = 0;           // the fire written for it; 0 while it waits (or once cancelled)
  std::int64_t cancelled_ms = 0;     // 0 = not cancelled
  std::string cancelled_by;
  std::string created_by;
  std::int64_t created_ms = 0;
  // "WAITING", "FIRED" or "CANCELLED".
  [[nodiscard]] std::string_view State() const {
    if (cancelled_ms != 0) return "CANCELLED";
    return log_id != 0 ? "FIRED" : "WAITING";
  }
};

}  // namespace cronwheel::admin

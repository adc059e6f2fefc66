#pragma once
// The scheduler's decisions for one scan, as a pure function of the due jobs and "now": which fires to
// write, which to skip as misfires, and where each job's schedule goes next. No I/O, no clock: the
// schedule thread (scheduler.hpp) runs it inside the scan transaction; unit tests run it on plain values.
//
// Rules (XXL-JOB's JobScheduleHelper, docs/xxl-job-protocol.md §5, with its weaknesses of §15 fixed; the
// rules for where a job's walk starts and resumes are in next_fire.hpp):
//  * A job is read when next_fire_ms <= now + pre_read (5 s).
//  * Every scheduled instant from next_fire_ms on is considered in order:
//      - late by more than the misfire threshold (5 s): a MISFIRE. All such instants of one job collapse
//        into one row: DO_NOTHING writes it as skipped (visible, status SKIPPED — XXL-JOB only logs a
//        warning, #1693); FIRE_ONCE_NOW writes it as one fire of type MISFIRE, sent at once.
//      - late by at most the threshold, or due now: a CRON fire, sent at once (direct).
//      - due within the pre-read window: a CRON fire, placed in the time ring for its second.
//    XXL-JOB fires only once for a job that is up to 5 s late and skips its other instants; cronwheel
//    writes each instant, so a scan that runs late loses none.
//  * The job's next_fire_ms becomes the first instant after the window; last_fire_ms the last instant
//    written. A job whose schedule never fires again, or whose schedule no longer parses, is stopped with
//    the reason in stop_reason (XXL-JOB stops it silently).
//  * FIX_DELAY: one fire, then next_fire_ms = kAwaitingCompletion until the run's result arrives
//    (the callback path sets finish + delay).
//  * At most `max_fires_per_job` instants per job per scan; counting missed instants stops after
//    `max_missed_count` (then the schedule jumps to now), so a job down for a year costs microseconds.
//  * Calendars and the active window (ringwheel/calendar.hpp; docs/operations.md, "Calendars and windows"):
//    the walk visits only instants from the job's start_ms to its end_ms that none of its calendars
//    excludes. An excluded instant is not a fire and not a misfire: no row is written for it. A job whose
//    window has ended is stopped with the reason, as one whose schedule has ended. A calendar the job names
//    that is not in the set given (deleted meanwhile) is ignored.
//
// Thread-safety: a ScanPlanner is used by one thread (it caches parsed schedules). Complexity: one
// schedule evaluation per written instant, plus at most max_missed_count per misfired job.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "admin/model/calendar.hpp"
#include "admin/model/fire.hpp"
#include "admin/schedule/next_fire.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {

struct ScanSettings {
  std::chrono::milliseconds pre_read{5000};           // XXL-JOB PRE_READ_MS
  std::chrono::milliseconds misfire_threshold{5000};  // later than this is a misfire
  int max_fires_per_job = 64;                         // instants written per job per scan
  int max_missed_count = 1000;                        // missed instants counted before jumping
};

// What the scan reads of a due job.
struct DueJob {
  int id = 0;
  int group_id = 0;
  std::string schedule_type;
  std::string schedule_conf;
  std::string time_zone;
  MisfireStrategy misfire_strategy = MisfireStrategy::kDoNothing;
  std::int64_t next_fire_ms = 0;
  std::vector<int> calendar_ids;  // the calendars it keeps (CalendarSet keys)
  std::int64_t start_ms = 0;      // its active window, inclusive; 0 = no bound
  std::int64_t end_ms = 0;
};

// The job row's new schedule state. Written only if the row still has expected_next_ms (so an edit
// that raced the scan wins).
struct JobAdvance {
  int job_id = 0;
  std::int64_t expected_next_ms = 0;
  std::int64_t next_fire_ms = 0;
  std::int64_t last_fire_ms = 0;
  bool stop = false;
  std::string stop_reason;
};

struct ScanPlan {
  std::vector<PlannedFire> fires;
  std::vector<JobAdvance> advances;
};

class ScanPlanner {
 public:
  explicit ScanPlanner(ScanSettings settings = {}) : settings_(settings) {}

  // `calendars` holds (at least) the calendars the jobs name.
  [[nodiscard]] ScanPlan Plan(std::span<const DueJob> jobs, std::int64_t now_ms,
                              const CalendarSet& calendars = {});

  [[nodiscard]] const ScanSettings& settings() const { return settings_; }

 private:
  // Parsed schedule of a job, kept while its (type, conf, zone) text is unchanged.
  struct CachedSchedule {
    std::string type, conf, zone;
    std::optional<ringwheel::Schedule> schedule;
    std::string error;  // when it does not parse
  };
  const CachedSchedule& ScheduleOf(const DueJob& job);
  void PlanJob(const DueJob& job, std::int64_t now_ms, const CalendarSet& calendars, ScanPlan& plan);

  ScanSettings settings_;
  std::unordered_map<int, CachedSchedule> cache_;
};

}  // namespace cronwheel::admin

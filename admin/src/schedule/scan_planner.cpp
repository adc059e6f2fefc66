#include "admin/schedule/scan_planner.hpp"

#include <fmt/format.h>

#include "model/time_format.hpp"

namespace cronwheel::admin {

const ScanPlanner::CachedSchedule& ScanPlanner::ScheduleOf(const DueJob& job) {
  auto& c = cache_[job.id];
  if (c.type != job.schedule_type || c.conf != job.schedule_conf || c.zone != job.time_zone ||
      (!c.schedule && c.error.empty())) {
    if (cache_.size() > 500'000) {  // bound memory across job churn; it refills in one scan
      cache_.clear();
      return ScheduleOf(job);
    }
    c.type = job.schedule_type;
    c.conf = job.schedule_conf;
    c.zone = job.time_zone;
    auto parsed = ringwheel::Schedule::Parse(c.type, c.conf, c.zone);
    if (parsed.ok()) {
      c.schedule = *std::move(parsed);
      c.error.clear();
    } else {
      c.schedule.reset();
      c.error = fmt::format("{}: {}", cronwheel::ErrorField(parsed.status()),
                            std::string(parsed.status().message()));
    }
  }
  return c;
}

ScanPlan ScanPlanner::Plan(std::span<const DueJob> jobs, std::int64_t now_ms, const CalendarSet& calendars) {
  ScanPlan plan;
  plan.fires.reserve(jobs.size());
  plan.advances.reserve(jobs.size());
  for (const auto& job : jobs)
    PlanJob(job, now_ms, calendars, plan);
  return plan;
}

void ScanPlanner::PlanJob(const DueJob& job, std::int64_t now_ms, const CalendarSet& calendars,
                          ScanPlan& plan) {
  JobAdvance adv{
      .job_id = job.id, .expected_next_ms = job.next_fire_ms, .next_fire_ms = 0, .last_fire_ms = 0};
  const auto& cached = ScheduleOf(job);
  if (!cached.schedule) {
    adv.stop = true;
    adv.stop_reason = fmt::format("stopped by the scheduler at {}: the schedule is not valid ({})",
                                  FormatUtc(now_ms), cached.error);
    plan.advances.push_back(std::move(adv));
    return;
  }
  const auto& base = *cached.schedule;
  if (base.type() == ringwheel::ScheduleType::kNone) {
    adv.stop = true;
    adv.stop_reason = fmt::format("stopped by the scheduler at {}: schedule type NONE never fires by itself",
                                  FormatUtc(now_ms));
    plan.advances.push_back(std::move(adv));
    return;
  }
  const std::int64_t threshold = settings_.misfire_threshold.count();
  const std::int64_t horizon = now_ms + settings_.pre_read.count();
  const bool fix_delay = base.type() == ringwheel::ScheduleType::kFixDelay;
  // The walk's schedule: the job's, within its window and calendars.
  std::vector<const ringwheel::Calendar*> kept;
  for (const int id : job.calendar_ids) {
    if (const auto it = calendars.find(id); it != calendars.end()) kept.push_back(&it->second);
  }
  const ringwheel::FireWindow schedule(base, kept, job.start_ms, job.end_ms);

  std::optional<std::int64_t> next = job.next_fire_ms;
  if (!schedule.unbounded()) next = schedule.FirstFireFromMs(job.next_fire_ms);
  if (!next) {
    adv.stop = true;
    adv.stop_reason = fmt::format(
        "stopped by the scheduler at {}: no fire from {} on is inside the job's window and calendars",
        FormatUtc(now_ms), FormatUtc(job.next_fire_ms));
    plan.advances.push_back(std::move(adv));
    return;
  }
  std::int64_t last_written = 0;

  // 1. Misfired instants: collapse into one row.
  if (*next < now_ms - threshold) {
    const std::int64_t first_missed = *next;
    std::int64_t last_missed = *next;
    int missed = 0;
    bool more = false;
    while (next && *next < now_ms - threshold) {
      if (missed == settings_.max_missed_count) {
        more = true;
        next = ResumeAfterMisfires(schedule, now_ms, settings_.misfire_threshold);  // the rest is uncountable
        break;
      }
      ++missed;
      last_missed = *next;
      next = fix_delay ? std::nullopt : schedule.NextFireMs(*next);
    }
    const auto count = more ? fmt::format("more than {}", missed) : std::to_string(missed);
    PlannedFire f{.job_id = job.id,
                  .group_id = job.group_id,
                  .scheduled_ms = first_missed,
                  .type = TriggerType::kMisfire};
    if (job.misfire_strategy == MisfireStrategy::kFireOnceNow) {
      f.note = fmt::format(
          "misfire: {} fire(s) from {} to {} were missed (more than {} ms late); "
          "FIRE_ONCE_NOW fires once now",
          count, FormatUtc(first_missed), FormatUtc(last_missed), threshold);
    } else {
      f.skipped = true;
      f.note = fmt::format(
          "misfire: {} fire(s) from {} to {} were missed (more than {} ms late); "
          "DO_NOTHING skipped them",
          count, FormatUtc(first_missed), FormatUtc(last_missed), threshold);
    }
    plan.fires.push_back(std::move(f));
    last_written = last_missed;
    if (fix_delay) {
      if (job.misfire_strategy == MisfireStrategy::kFireOnceNow) {
        adv.next_fire_ms = kAwaitingCompletion;
      } else {
        next = schedule.NextFireMs(now_ms);  // skipped: the delay counts from now
        adv.next_fire_ms = next.value_or(0);
      }
      adv.last_fire_ms = last_written;
      plan.advances.push_back(std::move(adv));
      return;
    }
  }

  // 2. Instants late by at most the threshold (sent at once) and due within the window (ring).
  int written = 0;
  while (next && *next <= horizon && written < settings_.max_fires_per_job) {
    plan.fires.push_back(
        {.job_id = job.id, .group_id = job.group_id, .scheduled_ms = *next, .type = TriggerType::kCron});
    last_written = *next;
    ++written;
    if (fix_delay) {
      next = kAwaitingCompletion;
      break;
    }
    next = schedule.NextFireMs(*next);
  }

  adv.last_fire_ms = last_written;
  if (next) {
    adv.next_fire_ms = *next;
  } else {
    adv.stop = true;
    adv.stop_reason =
        fmt::format("stopped by the scheduler at {}: the schedule has no fire after {}", FormatUtc(now_ms),
                    FormatUtc(last_written != 0 ? last_written : job.next_fire_ms));
  }
  plan.advances.push_back(std::move(adv));
}

}  // namespace cronwheel::admin

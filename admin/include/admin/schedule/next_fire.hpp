#pragma once
// Every rule that decides a job's next fire outside the scan's walk over its schedule, in one place. The
// scan planner (scan_planner.hpp) walks each due job's instants with ringwheel::Schedule; these rules say
// where the walk starts and where it resumes:
//
//  * Start: a job started, enabled, or whose schedule changed at `now` fires first at its schedule's first
//    instant after now + pre_read (XXL-JOB starts from now + 5 s, its fixed pre-read,
//    docs/xxl-job-protocol.md §5 "Start/stop/update"): the scan reads `pre_read` ahead, so an earlier instant
//    would already be behind the window of the scan that finds it. `pre_read` is the admin's setting
//    pre_read_ms.
//  * FIX_DELAY (cronwheel; XXL-JOB has only a commented-out enum entry): one fire is written, then the job
//    waits at kAwaitingCompletion (never due by itself) until that fire's result is known; its next fire is
//    then finish + delay. "Known" is the executor's callback (results/callback_service.hpp) or a failed
//    trigger, which brings no callback (results/failure_monitor.hpp).
//  * Misfire: after more than `max_missed_count` missed instants the walk jumps to the first instant that
//    is no longer a misfire (a job down for a year costs microseconds).
//
// Thread-safety: pure functions. Time: epoch milliseconds.

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "ringwheel/calendar.hpp"
#include "ringwheel/schedule.hpp"

namespace cronwheel::admin {

// next_fire_ms of an enabled FIX_DELAY job whose run has not finished yet: never due by itself.
inline constexpr std::int64_t kAwaitingCompletion = std::numeric_limits<std::int64_t>::max();

// The first fire of a job started at `now_ms` (see Start above). nullopt when the schedule does not parse
// or never fires after that instant.
std::optional<std::int64_t> FirstFireOnStart(std::string_view schedule_type, std::string_view schedule_conf,
                                             std::string_view time_zone, std::int64_t now_ms,
                                             std::chrono::milliseconds pre_read);

// FIX_DELAY: the next fire of a job whose awaited run finished (or failed to trigger) at `finished_ms`:
// finished + delay. A schedule that no longer parses gets finished + 1 s, so the next scan stops the job
// with the reason (the scan names what is wrong).
std::int64_t NextAfterCompletion(std::string_view schedule_conf, std::string_view time_zone,
                                 std::int64_t finished_ms);

// Misfire: the instant the walk resumes at after giving up counting missed instants at `now_ms`: the first
// instant after now - threshold, i.e. the first that is not a misfire.
std::optional<std::int64_t> ResumeAfterMisfires(const ringwheel::FireWindow& schedule, std::int64_t now_ms,
                                                std::chrono::milliseconds threshold);

// A retry's delay (cronwheel; XXL-JOB retries at once, docs/xxl-job-protocol.md §11): retry `attempt`
// (1-based) of a job with `backoff_s` waits backoff_s * 2^(attempt-1) seconds, at most `max`; backoff_s 0
// keeps XXL-JOB's "at once".
std::chrono::milliseconds RetryBackoff(int backoff_s, int attempt, std::chrono::seconds max);

}  // namespace cronwheel::admin

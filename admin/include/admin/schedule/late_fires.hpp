#pragma once
// What becomes of fires claimed for sending later than the misfire threshold (the ring or the database
// was stalled, or their admin died and another re-owned them): XXL-JOB's misfire rule
// (docs/xxl-job-protocol.md §5) applied at the moment of sending, not only at the scan. A pure function of
// the claimed fires and "now" (seastar's timer_set::expire(now) shape): no clock, no I/O.
//
// Thread-safety: a pure function. Complexity: O(fires).

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include "admin/model/fire.hpp"

namespace cronwheel::admin {

// Claimed fires split by lateness. A CRON fire later than the threshold (the ring or the database was
// stalled, or its admin died) follows its job's misfire strategy: DO_NOTHING skips it; FIRE_ONCE_NOW
// sends the latest late fire of each job once and skips the others. Fires of other types (manual, API,
// retry, parent, misfire compensation) are always sent.
struct LateResolution {
  std::vector<ClaimedFire> send;
  std::vector<std::int64_t> skip;  // log ids
};
LateResolution ResolveLateFires(std::span<const ClaimedFire> fires, std::int64_t now_ms,
                                std::chrono::milliseconds threshold);

}  // namespace cronwheel::admin

#pragma once
// The messages of a killed fire's result, as XXL-JOB's admin and users know them (docs/xxl-job-protocol.md
// §9): the reason, then where the fire was. Private to executor/src (job_dispatcher*.cpp).
#include <string_view>

namespace cronwheel::executor {

inline constexpr std::string_view kKillMsg = "scheduling center kill job.";
inline constexpr std::string_view kRunningKilled = " [job running, killed]";
inline constexpr std::string_view kQueuedKilled = " [job not executed, in the job queue, killed.]";
inline constexpr std::string_view kHeldKilled = " [job not executed, held for its instant, killed.]";

}  // namespace cronwheel::executor

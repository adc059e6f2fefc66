#pragma once
// The years a cron expression may name (Quartz: 1970-2199), shared by its parser (cron_parse.cpp) and its
// evaluation (cron.cpp). Private to ringwheel/src.

namespace ringwheel::cron_years {

inline constexpr int kMinYear = 1970;
inline constexpr int kMaxYear = 2199;

}  // namespace ringwheel::cron_years

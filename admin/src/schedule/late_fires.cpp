#include "admin/schedule/late_fires.hpp"

#include <unordered_map>

namespace cronwheel::admin {

LateResolution ResolveLateFires(std::span<const ClaimedFire> fires, std::int64_t now_ms,
                                std::chrono::milliseconds threshold) {
  LateResolution out;
  // The latest late FIRE_ONCE_NOW fire of each job, by index into `fires`.
  std::unordered_map<int, std::size_t> once;
  for (std::size_t i = 0; i < fires.size(); ++i) {
    const auto& f = fires[i];
    const bool late = f.type == TriggerType::kCron && now_ms - f.scheduled_ms > threshold.count();
    if (!late) {
      out.send.push_back(f);
    } else if (f.misfire_strategy == MisfireStrategy::kFireOnceNow) {
      auto [it, inserted] = once.try_emplace(f.job_id, i);
      if (!inserted) {
        const auto keep = fires[it->second].scheduled_ms >= f.scheduled_ms ? it->second : i;
        out.skip.push_back(fires[keep == i ? it->second : i].log_id);
        it->second = keep;
      }
    } else {
      out.skip.push_back(f.log_id);
    }
  }
  for (const auto& [job, i] : once)
    out.send.push_back(fires[i]);
  return out;
}

}  // namespace cronwheel::admin

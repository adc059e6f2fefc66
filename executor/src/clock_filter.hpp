#pragma once
// The best recent measurement of this executor's clock against the admin's (ahead-of-time dispatch,
// docs/architecture.md): NTP's clock filter (RFC 5905 §10) reduced to what a heartbeat needs.
//
// Each sample is one exchange: an offset and an error bound (half the round trip, plus 1 ms), taken at
// `at_ms` on this executor's clock. A short round trip bounds the offset tightly, a long one (a busy admin, a
// queue on the way) loosely, so the filter keeps the last `kSamples` and reports the one with the least
// error, its error grown as it ages by PHI = 15 ppm (NTP's bound on a disciplined clock's frequency error). A
// new sample whose interval [offset - error, offset + error] does not overlap an older one's (aged) shows
// that a clock stepped or drifted beyond that bound: the older ones are dropped, and the filter starts again
// from the new one. So the offset reported is never the stale one of a clock that moved.
//
// Not thread-safe (the heartbeat's thread only). Complexity: O(kSamples) per call.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace cronwheel::executor {

class ClockFilter {
 public:
  static constexpr std::size_t kSamples = 8;  // NTP keeps 8
  struct Sample {
    std::int64_t offset_ms = 0;  // this clock minus the admin's
    std::int64_t error_ms = 0;   // |true offset - offset_ms| <= error_ms when taken
    std::int64_t at_ms = 0;      // when taken (this clock, epoch ms)
  };

  void Add(const Sample& s) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const auto old = Aged(samples_[i], s.at_ms);
      const auto gap =
          old.offset_ms > s.offset_ms ? old.offset_ms - s.offset_ms : s.offset_ms - old.offset_ms;
      if (gap <= old.error_ms + s.error_ms) samples_[kept++] = samples_[i];
    }
    size_ = kept;
    if (size_ == kSamples) {  // the oldest goes
      std::rotate(samples_.begin(), samples_.begin() + 1, samples_.end());
      --size_;
    }
    samples_[size_++] = s;
  }

  // The sample with the least error at `now_ms` (its error aged to then); nullopt before the first.
  [[nodiscard]] std::optional<Sample> Best(std::int64_t now_ms) const {
    std::optional<Sample> best;
    for (std::size_t i = 0; i < size_; ++i) {
      const auto s = Aged(samples_[i], now_ms);
      if (!best || s.error_ms < best->error_ms) best = s;
    }
    return best;
  }

 private:
  // `s` with its error grown by 15 ppm of its age at `now_ms`, rounded up.
  static Sample Aged(Sample s, std::int64_t now_ms) {
    const auto age = std::max<std::int64_t>(now_ms - s.at_ms, 0);
    s.error_ms += (age * 15 + 999'999) / 1'000'000;
    return s;
  }

  std::array<Sample, kSamples> samples_{};
  std::size_t size_ = 0;
};

}  // namespace cronwheel::executor

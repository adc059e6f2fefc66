#pragma once
// SecondRing: XXL-JOB's 60-slot time ring (JobScheduleHelper.ringData), made lossless.
//
// In the admin, the schedule thread reads the fires due within the next 5 s, commits them to PostgreSQL
// (job-log rows in state pending) and only then Push()es each into the ring; the ring thread wakes at
// every second boundary and Drain()s what is due, handing it to the trigger pools.
//
// Slots are keyed by a fire's second of the minute, (fire_ms / 1000) % 60, as in XXL-JOB; each entry keeps
// its full fire_ms, so an entry a minute ahead that shares the slot, or one that is still in the future,
// is recognised and left in place. XXL-JOB drains the current slot and the previous one (3.3+: two) and
// silently loses a slot when its ring thread stalls longer than that. Here Drain() remembers how far it
// has drained (a watermark: every entry with fire_ms <= the previous Drain's now_ms has been returned), so:
//   * Drain(now_ms) returns every entry with fire_ms <= now_ms exactly once: those in the slots of the
//     current second and the previous `lookback_seconds` (XXL-JOB's window), those of every second since
//     the previous Drain however long ago that was (a stalled ring thread loses nothing), and those pushed
//     late for a second an earlier Drain had already passed;
//   * nothing is returned before its time (fire_ms > now_ms stays, including an entry 60 s ahead);
//   * the result is ordered by (fire_ms, key).
// If the wall clock steps back, entries wait until now_ms reaches their fire_ms again; the watermark
// never moves back.
//
// Dedup: `key` identifies a fire (the job-log id). Push() refuses a key already in the ring; once drained,
// the key may be pushed again (the database's unique (job_id, scheduled_ms) key prevents real duplicates).
//
// Thread-safety: every member may be called concurrently (one mutex; pushes and drains are short).
// Complexity: Push O(1) amortised; Drain O(k + e log e) for k entries in the scanned slots (at most 60
// slots) and e returned; TakeAll O(n log n); memory O(n).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "cronwheel/mutex.hpp"

namespace ringwheel {

template <class T>
class SecondRing {
 public:
  struct Entry {
    std::int64_t fire_ms;  // epoch ms the fire is scheduled for
    std::int64_t key;      // unique per fire (job-log id)
    T item;
  };

  static constexpr int kSlots = 60;

  // `lookback_seconds` (0-59): how many previous seconds' slots every Drain scans besides the current
  // one; XXL-JOB 3.3+ uses 2. The watermark makes any value lossless; the look-back is kept as the
  // minimum window, so a Drain without a known previous one still scans it.
  explicit SecondRing(int lookback_seconds = 2)
      : lookback_seconds_(std::clamp(lookback_seconds, 0, kSlots - 1)) {}

  // Adds a fire. Returns false (and drops the item) when `key` is already in the ring.
  bool Push(std::int64_t fire_ms, std::int64_t key, T item) {
    cronwheel::MutexLock lock(mu_);
    if (!keys_.insert(key).second) return false;
    Entry e{fire_ms, key, std::move(item)};
    if (watermark_ms_ && fire_ms <= *watermark_ms_) {
      late_.push_back(std::move(e));  // its second was already drained: the next Drain returns it
    } else {
      slots_.at(SlotOf(fire_ms)).push_back(std::move(e));
    }
    ++size_;
    return true;
  }

  // Removes and returns every entry with fire_ms <= now_ms, ordered by (fire_ms, key). See the class
  // comment for which slots are scanned.
  std::vector<Entry> Drain(std::int64_t now_ms) {
    std::vector<Entry> out;
    cronwheel::MutexLock lock(mu_);
    const std::int64_t now_s = FloorDiv(now_ms, 1000);
    std::int64_t first_s = now_s - lookback_seconds_;
    if (!watermark_ms_) {
      first_s = now_s - (kSlots - 1);  // first Drain: anything already due, wherever it is
    } else {
      first_s = std::min(first_s, FloorDiv(*watermark_ms_, 1000));  // everything since the previous Drain
    }
    first_s = std::max(first_s, now_s - (kSlots - 1));  // 60 seconds cover every slot once
    for (std::int64_t s = first_s; s <= now_s; ++s)
      TakeDue(slots_.at(SlotOf(s * 1000)), now_ms, out);
    TakeDue(late_, now_ms, out);
    if (!watermark_ms_ || now_ms > *watermark_ms_) watermark_ms_ = now_ms;
    for (const Entry& e : out)
      keys_.erase(e.key);
    size_ -= out.size();
    std::sort(out.begin(), out.end(), Before);
    return out;
  }

  // Removes and returns everything (shutdown), ordered by (fire_ms, key).
  std::vector<Entry> TakeAll() {
    std::vector<Entry> out;
    cronwheel::MutexLock lock(mu_);
    out.reserve(size_);
    for (auto& slot : slots_) {
      std::move(slot.begin(), slot.end(), std::back_inserter(out));
      slot.clear();
    }
    std::move(late_.begin(), late_.end(), std::back_inserter(out));
    late_.clear();
    keys_.clear();
    size_ = 0;
    std::sort(out.begin(), out.end(), Before);
    return out;
  }

  // Entries in the ring.
  [[nodiscard]] std::size_t size() const {
    cronwheel::MutexLock lock(mu_);
    return size_;
  }

 private:
  static std::int64_t FloorDiv(std::int64_t a, std::int64_t b) {
    const std::int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
  }
  static std::size_t SlotOf(std::int64_t fire_ms) {
    const std::int64_t s = FloorDiv(fire_ms, 1000) % kSlots;
    return static_cast<std::size_t>(s < 0 ? s + kSlots : s);
  }
  static bool Before(const Entry& a, const Entry& b) {
    return a.fire_ms != b.fire_ms ? a.fire_ms < b.fire_ms : a.key < b.key;
  }
  // Moves the entries of `from` with fire_ms <= now_ms to `out`, keeping the rest in place.
  static void TakeDue(std::vector<Entry>& from, std::int64_t now_ms, std::vector<Entry>& out) {
    const auto keep = std::stable_partition(from.begin(), from.end(),
                                            [now_ms](const Entry& e) { return e.fire_ms > now_ms; });
    std::move(keep, from.end(), std::back_inserter(out));
    from.erase(keep, from.end());
  }

  const int lookback_seconds_;
  mutable cronwheel::Mutex mu_;
  std::array<std::vector<Entry>, kSlots> slots_ ABSL_GUARDED_BY(mu_);
  std::vector<Entry> late_ ABSL_GUARDED_BY(mu_);                // pushed at or below the watermark
  std::unordered_set<std::int64_t> keys_ ABSL_GUARDED_BY(mu_);  // keys in the ring, for dedup
  // now_ms of the latest Drain (never decreases)
  std::optional<std::int64_t> watermark_ms_ ABSL_GUARDED_BY(mu_);
  std::size_t size_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ringwheel

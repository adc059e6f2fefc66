#pragma once
// HashedWheel<T>: the pure core of a hashed timing wheel (Varghese & Lauck 1987/1996, "scheme 6"; the
// layout of Netty's HashedWheelTimer). No threads, no clock: the caller hands it "now" (seastar's
// timer_set::expire(now), Linux's timer wheel), so it is tested and benchmarked without sleeping.
// HashedWheelTimer (hashed_wheel_timer.hpp) drives it from a thread.
//
// Model. Time after `start` is cut into ticks of `tick` length; tick k covers the deadlines in
// (start + k*tick, start + (k+1)*tick] and is processed by the first Advance(now) with
// now >= start + (k+1)*tick. So an item never expires before its deadline (deadlines round up to the end
// of their tick) and at most one tick after it, given Advance is called on time. A deadline at or before
// the current tick goes into the current tick.
// The wheel has ticks_per_wheel buckets, rounded up to a power of two so that the bucket of tick k is
// k & mask (Netty's normalizeTicksPerWheel). A deadline further than one turn away shares its bucket with
// nearer ones and is skipped on each visit until its turn: Netty keeps a remainingRounds counter that it
// decrements per visit; here each node stores its absolute tick and a visit compares (equivalent, and it
// lets Advance catch up several turns in one pass over the buckets).
// Each bucket is a contiguous vector of (tick, sequence number, item) entries; a slab of locators (bucket,
// position) gives every item a stable handle index, so Cancel is O(1) by swap-remove, and a handle is
// checked against the entry's sequence number. Netty (and folly) thread a doubly linked list through the
// timeouts instead; profiling the 1M-pending benchmark with callgrind showed one dependent cache miss per
// expired node walking those lists (and one per free-list pop), while a contiguous bucket is scanned
// sequentially and expiry touches no random memory at all: one plain store to a locator per Schedule is
// the only scattered access on the schedule+expire path.
//
// Complexity: Schedule O(1) amortised; Cancel O(1); Advance O(ticks passed + entries visited), where an
// entry is visited once per turn it waits (once, for a deadline within one turn); memory O(pending +
// buckets); a bucket keeps the capacity of its largest burst.
// Thread-safety: none; one thread owns a HashedWheel (HashedWheelTimer's worker thread).

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ringwheel/clock.hpp"

namespace ringwheel {

// Identifies one scheduled item; stale once the item expired, was cancelled or taken. Each Schedule() draws
// a new 64-bit sequence number, so a stale handle never matches a later item that reuses its slot.
struct WheelHandle {
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t index = kNone;
  std::uint64_t seq = 0;
  [[nodiscard]] bool valid() const { return index != kNone; }
};

template <class T>
class HashedWheel {
 public:
  using Duration = std::chrono::nanoseconds;

  // tick > 0; 1 <= ticks_per_wheel <= 2^30 (rounded up to a power of two). Throws std::invalid_argument.
  HashedWheel(SteadyTime start, Duration tick, std::size_t ticks_per_wheel)
      : start_(start), tick_ns_(tick.count()) {
    if (tick_ns_ <= 0) throw std::invalid_argument("HashedWheel: tick must be > 0");
    if (ticks_per_wheel < 1 || ticks_per_wheel > (std::size_t{1} << 30)) {
      throw std::invalid_argument("HashedWheel: ticks_per_wheel must be 1..2^30, got " +
                                  std::to_string(ticks_per_wheel));
    }
    buckets_.resize(std::bit_ceil(ticks_per_wheel));
    mask_ = buckets_.size() - 1;
  }

  // Adds `item`, due at `deadline`. O(1) amortised.
  WheelHandle Schedule(SteadyTime deadline, T item) {
    const std::int64_t rel = std::chrono::duration_cast<Duration>(deadline - start_).count();
    // The tick whose interval (k*tick, (k+1)*tick] holds the deadline: ceil(rel / tick) - 1.
    const std::int64_t tick = std::max(rel <= 0 ? std::int64_t{-1} : (rel - 1) / tick_ns_, current_);
    std::uint32_t node = 0;
    if (!free_.empty()) {
      node = free_.back();
      free_.pop_back();
    } else {
      if (locators_.size() >= WheelHandle::kNone) throw std::length_error("HashedWheel: too many items");
      node = static_cast<std::uint32_t>(locators_.size());
      locators_.emplace_back();
    }
    const std::size_t b = BucketOf(tick);
    std::vector<Entry>& bucket = buckets_[b];
    locators_[node] = Locator{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(bucket.size())};
    const std::uint64_t seq = ++last_seq_;
    bucket.push_back(Entry{tick, seq, node, std::move(item)});
    ++size_;
    return WheelHandle{node, seq};
  }

  // Removes a scheduled item. Returns false when the handle is stale (expired, cancelled, taken). O(1).
  bool Cancel(WheelHandle h) {
    if (h.index >= locators_.size()) return false;
    const Locator loc = locators_[h.index];
    std::vector<Entry>& bucket = buckets_[loc.bucket];
    // A freed slot keeps its old locator; whatever sits there now has another node or sequence number.
    if (loc.pos >= bucket.size() || bucket[loc.pos].node != h.index || bucket[loc.pos].seq != h.seq)
      return false;
    if (loc.pos + 1 != bucket.size()) {  // fill the hole with the last entry
      bucket[loc.pos] = std::move(bucket.back());
      locators_[bucket[loc.pos].node].pos = loc.pos;
    }
    bucket.pop_back();
    free_.push_back(h.index);
    --size_;
    return true;
  }

  // Processes every tick that has ended by `now`, appending the expired items to `expired` in tick order
  // (unspecified order within a tick). Returns how many were appended.
  std::size_t Advance(SteadyTime now, std::vector<T>& expired) {
    const std::int64_t rel = std::chrono::duration_cast<Duration>(now - start_).count();
    if (rel < 0) return 0;
    const std::int64_t last = rel / tick_ns_ - 1;  // the last tick whose end is <= now
    if (last < current_) return 0;
    const std::size_t before = expired.size();
    if (static_cast<std::uint64_t>(last - current_) >= buckets_.size()) {
      // At least a whole turn has passed: one visit of every bucket finds all that is due.
      std::vector<std::pair<std::int64_t, T>> due;
      for (std::size_t b = 0; b < buckets_.size(); ++b) {
        ExpireBucket(b, last,
                     [&due](std::int64_t tick, T&& item) { due.emplace_back(tick, std::move(item)); });
      }
      std::stable_sort(due.begin(), due.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (auto& d : due)
        expired.push_back(std::move(d.second));
    } else {
      for (std::int64_t t = current_; t <= last; ++t) {
        ExpireBucket(BucketOf(t), t,
                     [&expired](std::int64_t, T&& item) { expired.push_back(std::move(item)); });
      }
    }
    current_ = last + 1;
    return expired.size() - before;
  }

  std::vector<T> Advance(SteadyTime now) {
    std::vector<T> expired;
    Advance(now, expired);
    return expired;
  }

  // When the next unprocessed tick ends: the earliest `now` at which Advance can expire anything more.
  [[nodiscard]] SteadyTime NextTickTime() const {
    return start_ + std::chrono::duration_cast<SteadyTime::duration>(Duration{(current_ + 1) * tick_ns_});
  }

  // Removes and returns every item, ordered by tick (shutdown).
  std::vector<T> TakeAll() {
    std::vector<std::pair<std::int64_t, T>> all;
    all.reserve(size_);
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      ExpireBucket(b, std::numeric_limits<std::int64_t>::max(),
                   [&all](std::int64_t tick, T&& item) { all.emplace_back(tick, std::move(item)); });
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<T> out;
    out.reserve(all.size());
    for (auto& a : all)
      out.push_back(std::move(a.second));
    return out;
  }

  // Items scheduled and not yet expired, cancelled or taken.
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  // Buckets (ticks_per_wheel rounded up to a power of two).
  [[nodiscard]] std::size_t wheel_size() const { return buckets_.size(); }
  [[nodiscard]] Duration tick() const { return Duration{tick_ns_}; }
  // Reserves room for n items in the handle slab (avoids regrowth during a burst).
  void Reserve(std::size_t n) {
    locators_.reserve(n);
    free_.reserve(n);
  }

 private:
  // An item in its bucket. Buckets are contiguous, so expiring one is a sequential scan.
  struct Entry {
    std::int64_t tick;   // the tick at whose end it expires
    std::uint64_t seq;   // its handle's sequence number
    std::uint32_t node;  // its locator
    T item;
  };
  // Where a handle's item is. Written when the item is scheduled or moved inside its bucket; never read
  // or written when it expires (expiry touches only the bucket and the free stack).
  struct Locator {
    std::uint32_t bucket = 0;
    std::uint32_t pos = WheelHandle::kNone;
  };

  [[nodiscard]] std::size_t BucketOf(std::int64_t tick) const {
    return static_cast<std::size_t>(tick) & mask_;
  }

  // Hands every entry of bucket b with tick <= up_to to sink(tick, item) and compacts the rest in place
  // (deadlines of later turns stay).
  template <class Sink>
  void ExpireBucket(std::size_t b, std::int64_t up_to, Sink&& sink) {
    std::vector<Entry>& bucket = buckets_[b];
    std::size_t kept = 0;
    for (std::size_t i = 0; i < bucket.size(); ++i) {
      Entry& e = bucket[i];
      if (e.tick <= up_to) {
        sink(e.tick, std::move(e.item));
        free_.push_back(e.node);
        --size_;
      } else {
        if (kept != i) {  // only entries waiting for a later turn move, and only past an expired one
          bucket[kept] = std::move(e);
          locators_[bucket[kept].node].pos = static_cast<std::uint32_t>(kept);
        }
        ++kept;
      }
    }
    bucket.erase(bucket.begin() + static_cast<std::ptrdiff_t>(kept), bucket.end());
  }

  SteadyTime start_;
  std::int64_t tick_ns_;
  std::size_t mask_ = 0;
  std::int64_t current_ = 0;  // the next tick to process
  std::vector<std::vector<Entry>> buckets_;
  std::vector<Locator> locators_;    // by handle index
  std::vector<std::uint32_t> free_;  // free handle indexes (a stack: no pointer chasing)
  std::uint64_t last_seq_ = 0;
  std::size_t size_ = 0;
};

}  // namespace ringwheel

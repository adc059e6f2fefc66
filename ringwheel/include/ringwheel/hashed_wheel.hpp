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
// Each bucket is a doubly linked list threaded through a slab of nodes by index (intrusive, no allocation
// per timer once the slab has grown), so Cancel is O(1).
//
// Complexity: Schedule O(1) amortised; Cancel O(1); Advance O(ticks passed + nodes visited), where a node
// is visited once per turn it waits (once, for a deadline within one turn); memory O(pending + buckets).
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

// Identifies one scheduled item; stale after the item expired or was cancelled (a generation counter
// makes a stale handle harmless even after its slab slot is reused).
struct WheelHandle {
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t index = kNone;
  std::uint32_t generation = 0;
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
    const std::uint32_t i = Allocate();
    Node& n = nodes_[i];
    n.tick = tick;
    n.item.emplace(std::move(item));
    LinkTail(BucketOf(tick), i);
    ++size_;
    return WheelHandle{i, n.generation};
  }

  // Removes a scheduled item. Returns false when the handle is stale (expired, cancelled, taken). O(1).
  bool Cancel(WheelHandle h) {
    if (h.index >= nodes_.size()) return false;
    Node& n = nodes_[h.index];
    if (!n.live || n.generation != h.generation) return false;
    Unlink(BucketOf(n.tick), h.index);
    Free(h.index);
    --size_;
    return true;
  }

  // Processes every tick that has ended by `now`, appending the expired items to `expired` in tick order
  // (insertion order within a tick). Returns how many were appended.
  std::size_t Advance(SteadyTime now, std::vector<T>& expired) {
    const std::int64_t rel = std::chrono::duration_cast<Duration>(now - start_).count();
    if (rel < 0) return 0;
    const std::int64_t last = rel / tick_ns_ - 1;  // the last tick whose end is <= now
    if (last < current_) return 0;
    const std::size_t before = expired.size();
    if (static_cast<std::uint64_t>(last - current_) >= buckets_.size()) {
      // At least a whole turn has passed: one visit of every bucket finds all that is due.
      std::vector<std::pair<std::int64_t, std::uint32_t>> due;
      for (std::size_t b = 0; b < buckets_.size(); ++b) {
        for (std::uint32_t i = buckets_[b].head; i != WheelHandle::kNone; i = nodes_[i].next) {
          if (nodes_[i].tick <= last) due.emplace_back(nodes_[i].tick, i);
        }
      }
      std::stable_sort(due.begin(), due.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [tick, i] : due)
        Expire(BucketOf(tick), i, expired);
    } else {
      for (std::int64_t t = current_; t <= last; ++t) {
        Bucket& bucket = buckets_[BucketOf(t)];
        for (std::uint32_t i = bucket.head; i != WheelHandle::kNone;) {
          const std::uint32_t next = nodes_[i].next;
          if (nodes_[i].tick <= t) Expire(BucketOf(t), i, expired);
          i = next;
        }
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
    std::vector<std::pair<std::int64_t, std::uint32_t>> all;
    all.reserve(size_);
    for (std::size_t b = 0; b < buckets_.size(); ++b) {
      for (std::uint32_t i = buckets_[b].head; i != WheelHandle::kNone; i = nodes_[i].next) {
        all.emplace_back(nodes_[i].tick, i);
      }
    }
    std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<T> out;
    out.reserve(all.size());
    for (const auto& [tick, i] : all)
      Expire(BucketOf(tick), i, out);
    return out;
  }

  // Items scheduled and not yet expired, cancelled or taken.
  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  // Buckets (ticks_per_wheel rounded up to a power of two).
  [[nodiscard]] std::size_t wheel_size() const { return buckets_.size(); }
  [[nodiscard]] Duration tick() const { return Duration{tick_ns_}; }
  // Reserves slab room for n items (avoids regrowth during a burst).
  void Reserve(std::size_t n) { nodes_.reserve(n); }

 private:
  struct Node {
    std::int64_t tick = 0;  // the tick at whose end it expires
    std::uint32_t prev = WheelHandle::kNone;
    std::uint32_t next = WheelHandle::kNone;  // also the free-list link
    std::uint32_t generation = 1;
    bool live = false;
    std::optional<T> item;
  };
  struct Bucket {
    std::uint32_t head = WheelHandle::kNone;
    std::uint32_t tail = WheelHandle::kNone;
  };

  [[nodiscard]] std::size_t BucketOf(std::int64_t tick) const {
    return static_cast<std::size_t>(tick) & mask_;
  }

  std::uint32_t Allocate() {
    std::uint32_t i = free_;
    if (i != WheelHandle::kNone) {
      free_ = nodes_[i].next;
    } else {
      if (nodes_.size() >= WheelHandle::kNone) throw std::length_error("HashedWheel: too many items");
      i = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[i].live = true;
    return i;
  }
  void Free(std::uint32_t i) {
    Node& n = nodes_[i];
    n.item.reset();
    n.live = false;
    ++n.generation;
    n.prev = WheelHandle::kNone;
    n.next = free_;
    free_ = i;
  }
  void LinkTail(std::size_t b, std::uint32_t i) {
    Bucket& bucket = buckets_[b];
    nodes_[i].prev = bucket.tail;
    nodes_[i].next = WheelHandle::kNone;
    if (bucket.tail != WheelHandle::kNone) {
      nodes_[bucket.tail].next = i;
    } else {
      bucket.head = i;
    }
    bucket.tail = i;
  }
  void Unlink(std::size_t b, std::uint32_t i) {
    Bucket& bucket = buckets_[b];
    const Node& n = nodes_[i];
    if (n.prev != WheelHandle::kNone) {
      nodes_[n.prev].next = n.next;
    } else {
      bucket.head = n.next;
    }
    if (n.next != WheelHandle::kNone) {
      nodes_[n.next].prev = n.prev;
    } else {
      bucket.tail = n.prev;
    }
  }
  void Expire(std::size_t b, std::uint32_t i, std::vector<T>& out) {
    Unlink(b, i);
    out.push_back(std::move(*nodes_[i].item));
    Free(i);
    --size_;
  }

  SteadyTime start_;
  std::int64_t tick_ns_;
  std::size_t mask_ = 0;
  std::int64_t current_ = 0;  // the next tick to process
  std::vector<Bucket> buckets_;
  std::vector<Node> nodes_;
  std::uint32_t free_ = WheelHandle::kNone;
  std::size_t size_ = 0;
};

}  // namespace ringwheel

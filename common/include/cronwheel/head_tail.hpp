#pragma once
// A job log cut to a size by keeping its head and its tail, for the fire output archive (docs/operations.md,
// "The fire output archive"): cronwheel-executor's copy of a fire's log sent with its callback, and the
// admin's cap on what it stores of a log pushed or pulled.
//
// Why head and tail: a log's first lines say what the fire was given and its last lines how it ended (the
// error, the end line with the handle code); the middle of a huge log is what a reader can do without. A
// text longer than the cap keeps its first half-cap bytes up to the last line end in them, then one marker
// line saying how many bytes were left out, then its last half-cap bytes from the first line start in them:
//
//   ----------- 5242880 bytes of this log of 6291456 bytes left out here: the archive keeps its first
//   and last lines, at most 1048576 bytes -----------
//
// (one line). A text that fits is kept whole, unchanged. What is kept is never split inside a UTF-8 sequence
// (a line longer than half the cap is cut on a code point boundary and ended with '\n').
//
// What is kept is at most the cap plus kMarkerBytes long.
//
// Memory: a HeadAndTail holds at most the cap plus 64 KiB, whatever is appended (the tail is trimmed as it
// grows). Complexity: Append is amortised O(bytes appended); Take is O(cap).
//
// Thread-safety: none (one owner); the free functions are pure.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cronwheel {

// What was kept of a text.
struct KeptText {
  std::string text;            // the whole text, or head + marker line + tail
  std::uint64_t size = 0;      // bytes of the whole text
  std::uint64_t left_out = 0;  // bytes of the whole text not in `text` (0: it is whole)
};

// The marker line put between the head and the tail (ends in '\n'), at most kMarkerBytes long.
std::string LeftOutMarker(std::uint64_t left_out, std::uint64_t size, std::size_t cap);
// What a kept text may hold beyond its cap: the marker line (and a line end put after a head cut mid-line).
// A text no longer than cap + kMarkerBytes needs no second cut.
inline constexpr std::size_t kMarkerBytes = 256;

class HeadAndTail {
 public:
  // The smallest cap: smaller ones are raised to it.
  static constexpr std::size_t kMinCap = 1024;
  explicit HeadAndTail(std::size_t cap);

  // Appends bytes of the text, in order.
  void Append(std::string_view bytes);
  // Counts `n` bytes of the text that are not given (the middle of a file read as its head and tail).
  // The bytes before them can no longer be part of the tail; call it once the head is full.
  void Skip(std::uint64_t n);
  // Bytes of the text so far, appended and skipped.
  [[nodiscard]] std::uint64_t size() const { return size_; }
  // The head's and the tail's share of the cap: read this much of a file's start and end.
  [[nodiscard]] std::size_t head_cap() const { return head_cap_; }
  [[nodiscard]] std::size_t tail_cap() const { return tail_cap_; }
  [[nodiscard]] std::size_t cap() const { return head_cap_ + tail_cap_; }

  // What is kept (see the header comment). Leaves the object empty.
  KeptText Take();

 private:
  std::size_t head_cap_;
  std::size_t tail_cap_;
  std::string head_;
  std::string tail_;
  // The byte before tail_[0] (0 to 255), or a value of head_tail.cpp's: it follows the head directly, or
  // is unknown (after a Skip).
  int before_tail_;
  bool skipped_ = false;
  std::uint64_t size_ = 0;
};

// `text` kept within `cap` (HeadAndTail over the whole of it).
KeptText KeepHeadAndTail(std::string_view text, std::size_t cap);

}  // namespace cronwheel

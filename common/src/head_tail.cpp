#include "cronwheel/head_tail.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace cronwheel {
namespace {

// The tail may grow this far past its share before it is trimmed (amortises the erase).
constexpr std::size_t kSlack = std::size_t{64} * 1024;
// before_tail_ values that are not a byte.
constexpr int kAfterHead = -1;  // tail_[0] follows the head directly
constexpr int kUnknown = -2;    // bytes were skipped before tail_[0]

bool IsContinuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0U) == 0x80U;
}

// The length of the UTF-8 sequence a lead byte starts (1 for ASCII and for bytes that lead nothing).
std::size_t SequenceLength(char lead) {
  const auto b = static_cast<unsigned char>(lead);
  if ((b & 0xE0U) == 0xC0U) return 2;
  if ((b & 0xF0U) == 0xE0U) return 3;
  if ((b & 0xF8U) == 0xF0U) return 4;
  return 1;
}

// `s` without a last UTF-8 sequence that the end of `s` cuts short.
std::size_t CompleteSequences(std::string_view s) {
  std::size_t lead = s.size();
  for (int back = 0; back < 4 && lead > 0; ++back) {
    --lead;
    if (!IsContinuation(s[lead])) return lead + SequenceLength(s[lead]) > s.size() ? lead : s.size();
  }
  return s.size();
}

}  // namespace

std::string LeftOutMarker(std::uint64_t left_out, std::uint64_t size, std::size_t cap) {
  return fmt::format(
      "----------- {} bytes of this log of {} bytes left out here: the archive keeps its first and last "
      "lines, at most {} bytes -----------\n",
      left_out, size, cap);
}

HeadAndTail::HeadAndTail(std::size_t cap)
    : head_cap_(std::max(cap, kMinCap) / 2),
      tail_cap_(std::max(cap, kMinCap) - head_cap_),
      before_tail_(kAfterHead) {}

void HeadAndTail::Append(std::string_view bytes) {
  size_ += bytes.size();
  if (!skipped_ && head_.size() < head_cap_) {
    const auto n = std::min(head_cap_ - head_.size(), bytes.size());
    head_.append(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  if (bytes.empty()) return;
  tail_.append(bytes);
  if (tail_.size() > tail_cap_ + kSlack) {
    const auto drop = tail_.size() - tail_cap_;
    before_tail_ = static_cast<unsigned char>(tail_[drop - 1]);
    tail_.erase(0, drop);
  }
}

void HeadAndTail::Skip(std::uint64_t n) {
  if (n == 0) return;
  size_ += n;
  skipped_ = true;
  tail_.clear();
  before_tail_ = kUnknown;
}

KeptText HeadAndTail::Take() {
  KeptText out;
  out.size = size_;
  if (!skipped_ && size_ <= cap()) {
    out.text = std::move(head_);
    out.text += tail_;
  } else {
    // The head up to its last line end; without one, up to its last whole code point (and a line end).
    std::string_view head(head_);
    const auto nl = head.rfind('\n');
    head = head.substr(0, nl != std::string_view::npos ? nl + 1 : CompleteSequences(head));
    // The tail from its first line start; without one, from its first whole code point.
    std::string_view tail(tail_);
    int before = before_tail_ == kAfterHead
                     ? (head_.empty() ? '\n' : static_cast<unsigned char>(head_.back()))
                     : before_tail_;
    if (tail.size() > tail_cap_) {
      before = static_cast<unsigned char>(tail[tail.size() - tail_cap_ - 1]);
      tail.remove_prefix(tail.size() - tail_cap_);
    }
    if (before != '\n') {
      const auto first_nl = tail.find('\n');
      if (first_nl != std::string_view::npos && first_nl + 1 < tail.size()) {
        tail.remove_prefix(first_nl + 1);
      } else {
        while (!tail.empty() && IsContinuation(tail.front()))
          tail.remove_prefix(1);
      }
    }
    out.left_out = size_ - head.size() - tail.size();
    out.text.reserve(head.size() + tail.size() + 200);
    out.text.append(head);
    if (out.left_out > 0) {
      if (!out.text.empty() && out.text.back() != '\n') out.text += '\n';
      out.text += LeftOutMarker(out.left_out, size_, cap());
    }
    out.text.append(tail);
  }
  head_.clear();
  tail_.clear();
  size_ = 0;
  skipped_ = false;
  before_tail_ = kAfterHead;
  return out;
}

KeptText KeepHeadAndTail(std::string_view text, std::size_t cap) {
  HeadAndTail keep(cap);
  keep.Append(text);
  return keep.Take();
}

}  // namespace cronwheel

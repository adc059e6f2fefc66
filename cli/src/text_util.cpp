#include "cwcli/text_util.hpp"

#include <date/date.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <system_error>

#include "cronwheel/status.hpp"

namespace cronwheel::cli {
namespace {

// The last failed system call's errno as a status with `message` (the code follows errno).
absl::Status LastError(std::string_view message) {
  return cronwheel::ErrnoError(errno, message);
}

// The message of the last failed system call.
std::string LastErrorText() {
  return std::error_code(errno, std::generic_category()).message();
}

}  // namespace

absl::StatusOr<std::string> ReadTextFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return LastError(fmt::format("cannot read '{}': {}", path.string(), LastErrorText()));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return LastError(fmt::format("cannot read '{}': a read error", path.string()));
  return ss.str();
}

absl::Status WriteTextFile(const std::filesystem::path& path, std::string_view content) {
  auto tmp = path;
  tmp += fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return LastError(fmt::format("cannot write '{}': {}", tmp.string(), LastErrorText()));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      absl::Status status = LastError(fmt::format("cannot write '{}': a write error", tmp.string()));
      std::filesystem::remove(tmp);
      return status;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    absl::Status status =
        cronwheel::ErrnoError(ec.value(), fmt::format("cannot write '{}': {}", path.string(), ec.message()));
    std::filesystem::remove(tmp, ec);
    return status;
  }
  return absl::OkStatus();
}

std::string WithoutLibraryPrefix(std::string message) {
  const auto open = message.find("[json.exception.");
  if (open == std::string::npos) return message;
  const auto close = message.find("] ", open);
  if (close == std::string::npos) return message;
  message.erase(open, close + 2 - open);
  return message;
}

std::string FormatUtcMs(std::int64_t ms) {
  if (ms <= 0) return "-";
  using namespace std::chrono;
  const sys_seconds t{floor<seconds>(milliseconds{ms})};
  const auto day = floor<days>(t);
  const year_month_day ymd{day};
  const hh_mm_ss hms{t - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

absl::StatusOr<std::int64_t> ParseInstantMs(std::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError(
        fmt::format("'{}' is not an instant: use ISO 8601 with an offset, e.g. 2026-11-27T18:30:00Z or "
                    "2026-11-27T18:30+01:00",
                    text.substr(0, 100)));
  };
  std::string s(text);
  if (s.size() < 16) return invalid();
  if (s[10] == ' ') s[10] = 'T';
  if (s.back() == 'Z' || s.back() == 'z') {
    s.pop_back();
    s += "+00:00";
  }
  for (const char* format : {"%FT%T%Ez", "%FT%R%Ez"}) {
    std::istringstream in(s);
    date::sys_time<std::chrono::milliseconds> t;
    in >> date::parse(format, t);
    if (!in.fail() && in.peek() == std::char_traits<char>::eof()) return t.time_since_epoch().count();
  }
  return invalid();
}

absl::StatusOr<std::int64_t> ParseDurationMs(std::string_view text) {
  const auto invalid = [&] {
    return absl::InvalidArgumentError(fmt::format(
        "'{}' is not a duration: use <integer><unit>..., units ms, s, m, h, d (e.g. 90s, 10m, 1h30m)",
        text.substr(0, 100)));
  };
  if (text.empty()) return invalid();
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::int64_t n = 0;
    const auto digits = i;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      if (n > (INT64_MAX - 9) / 10)
        return absl::OutOfRangeError(fmt::format("'{}' is too long a duration", text));
      n = n * 10 + (text[i] - '0');
    }
    if (i == digits) return invalid();
    std::int64_t unit = 0;
    if (text.substr(i, 2) == "ms") {
      unit = 1;
      i += 2;
    } else if (i < text.size()) {
      switch (text[i]) {
        case 's':
          unit = 1000;
          break;
        case 'm':
          unit = 60'000;
          break;
        case 'h':
          unit = 3'600'000;
          break;
        case 'd':
          unit = 86'400'000;
          break;
        default:
          return invalid();
      }
      ++i;
    } else {
      return invalid();
    }
    if (n > (INT64_MAX - total) / unit)
      return absl::OutOfRangeError(fmt::format("'{}' is too long a duration", text));
    total += n * unit;
  }
  return total;
}

}  // namespace cronwheel::cli

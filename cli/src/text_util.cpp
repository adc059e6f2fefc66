#include "cwcli/text_util.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <system_error>

#include "ringwheel/status.hpp"

namespace cronwheel::cli {
namespace {

// The last failed system call's errno as a status with `message` (the code follows errno).
absl::Status LastError(std::string_view message) {
  return ringwheel::ErrnoError(errno, message);
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
        ringwheel::ErrnoError(ec.value(), fmt::format("cannot write '{}': {}", path.string(), ec.message()));
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

}  // namespace cronwheel::cli

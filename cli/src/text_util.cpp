#include "cwcli/text_util.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <system_error>

namespace cronwheel::cli {
namespace {

void Set(std::string* error, std::string message) {
  if (error != nullptr) *error = std::move(message);
}

// The message of the last failed system call.
std::string LastError() {
  return std::error_code(errno, std::generic_category()).message();
}

}  // namespace

std::optional<std::string> ReadTextFile(const std::filesystem::path& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Set(error, fmt::format("cannot read '{}': {}", path.string(), LastError()));
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) {
    Set(error, fmt::format("cannot read '{}': a read error", path.string()));
    return std::nullopt;
  }
  return ss.str();
}

bool WriteTextFile(const std::filesystem::path& path, std::string_view content, std::string* error) {
  auto tmp = path;
  tmp += fmt::format(".tmp-{}", ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      Set(error, fmt::format("cannot write '{}': {}", tmp.string(), LastError()));
      return false;
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      Set(error, fmt::format("cannot write '{}': a write error", tmp.string()));
      std::filesystem::remove(tmp);
      return false;
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    Set(error, fmt::format("cannot write '{}': {}", path.string(), ec.message()));
    std::filesystem::remove(tmp, ec);
    return false;
  }
  return true;
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

#pragma once
// Instants as text for messages users read: "2026-01-01T00:00:05.250Z" (UTC, ISO-8601; milliseconds
// only when non-zero).
#include <date/date.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace cronwheel::admin {

inline std::string FormatUtc(std::int64_t ms) {
  const date::sys_time<std::chrono::milliseconds> t{std::chrono::milliseconds{ms}};
  if (ms % 1000 == 0) return date::format("%FT%TZ", date::floor<std::chrono::seconds>(t));
  return date::format("%FT%TZ", t);
}

}  // namespace cronwheel::admin

#pragma once
// What the REST API asks of jobs and fires: list filters, pages, and the selection of fires to clear.
// Plain values; no thread-safety concerns.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "admin/model/model.hpp"

namespace cronwheel::admin {

struct LogQuery {
  std::optional<int> job_id;
  std::optional<int> group_id;
  std::optional<std::string> status;          // PENDING, RUNNING, SUCCESS, FAILED, SKIPPED
  std::optional<std::int64_t> from_ms;        // scheduled_ms >= from_ms
  std::optional<std::int64_t> to_ms;          // scheduled_ms < to_ms
  std::optional<std::vector<int>> group_ids;  // restrict to these groups (permissions)
  int offset = 0;
  int limit = 50;
};

struct LogPage {
  std::int64_t total = 0;
  std::vector<JobLog> items;
};

struct JobQuery {
  std::optional<int> group_id;
  std::optional<bool> enabled;
  std::optional<std::string> text;  // substring of description, handler or a tag (case-insensitive)
  std::vector<std::string> tags;    // jobs having every one of these tags (valid, lower case)
  std::optional<std::vector<int>> group_ids;
  int offset = 0;
  int limit = 50;
};

struct JobPage {
  std::int64_t total = 0;
  std::vector<Job> items;
};

// A tag in use and how many jobs carry it (GET /api/v1/tags).
struct TagCount {
  std::string tag;
  std::int64_t jobs = 0;
};

// Which fires to delete. Exactly one of older_than_days / keep_last is set.
struct LogClear {
  std::optional<int> group_id;
  std::optional<int> job_id;
  std::optional<std::vector<int>> group_ids;  // restrict to these groups (permissions)
  std::optional<int> older_than_days;         // scheduled before now - N days (0 = all)
  std::optional<int> keep_last;               // keep the newest N of the selection
};

}  // namespace cronwheel::admin

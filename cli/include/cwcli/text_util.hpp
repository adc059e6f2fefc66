#pragma once
// Small text and file helpers of the command-line client. Thread-safe (no shared state).

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cronwheel::cli {

// The whole file, or an error naming the file and the reason, its code following errno (NotFound for
// "cannot read 'x': No such file or directory", PermissionDenied, ...).
absl::StatusOr<std::string> ReadTextFile(const std::filesystem::path& path);

// Writes `content` to a temporary file next to `path` and renames it over `path`, so a reader never sees
// half a file. OK, or an error naming the file and the reason ("cannot write 'out.json.tmp-42': Permission
// denied"), its code following errno.
absl::Status WriteTextFile(const std::filesystem::path& path, std::string_view content);

// nlohmann_json's messages start with "[json.exception.parse_error.101] "; the user needs the rest.
std::string WithoutLibraryPrefix(std::string message);

// An instant (epoch ms) as UTC ISO 8601 to the second, "2026-05-01T12:00:00Z"; "-" for 0 (never).
std::string FormatUtcMs(std::int64_t ms);

}  // namespace cronwheel::cli

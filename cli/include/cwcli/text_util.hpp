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

// An ISO 8601 instant with its offset, as epoch ms: "2026-11-27T18:30:00Z", "2026-11-27T18:30+01:00",
// "2026-11-27 18:30:00.250-05:00" (seconds and their fraction optional, 'T' or a space). An instant without
// an offset is refused (it would depend on this machine's zone): InvalidArgument naming the text and the
// shape.
absl::StatusOr<std::int64_t> ParseInstantMs(std::string_view text);

// A duration as milliseconds: one or more <integer><unit>, units ms, s, m, h, d ("90s", "10m", "1h30m",
// "2d"). InvalidArgument naming the text and the shape; OutOfRange beyond about 290 million years.
absl::StatusOr<std::int64_t> ParseDurationMs(std::string_view text);

}  // namespace cronwheel::cli

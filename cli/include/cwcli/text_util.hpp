#pragma once
// Small text and file helpers of the command-line client. Thread-safe (no shared state).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace cronwheel::cli {

// The whole file, or nullopt with *error naming the file and the reason ("cannot read 'x': No such file or
// directory").
std::optional<std::string> ReadTextFile(const std::filesystem::path& path, std::string* error);

// Writes `content` to a temporary file next to `path` and renames it over `path`, so a reader never sees
// half a file. False with *error naming the file and the reason.
bool WriteTextFile(const std::filesystem::path& path, std::string_view content, std::string* error);

// nlohmann_json's messages start with "[json.exception.parse_error.101] "; the user needs the rest.
std::string WithoutLibraryPrefix(std::string message);

// An instant (epoch ms) as UTC ISO 8601 to the second, "2026-05-01T12:00:00Z"; "-" for 0 (never).
std::string FormatUtcMs(std::int64_t ms);

}  // namespace cronwheel::cli

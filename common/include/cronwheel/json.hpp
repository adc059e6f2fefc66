#pragma once
// JSON helpers shared by the admin and the executor (nlohmann_json).
//
// Thread-safety: pure functions.

#include <absl/status/statusor.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cronwheel {

// JSON nested deeper than this (arrays and objects) is refused while it is parsed. nlohmann::json parses
// any depth, but copying, comparing and printing a value recurse once per level: a 200 KB body of '['
// overflowed the stack of a request thread and killed the process. Real bodies nest at most 3 levels.
inline constexpr int kMaxJsonDepth = 64;

// Parses a request body as JSON. An InvalidArgument status saying why for a syntax error ("body is not
// valid JSON: [json.exception.parse_error.101] ..."), a number outside the range of a double (1e400) and
// nesting deeper than kMaxJsonDepth ("body nests JSON arrays and objects deeper than 64 levels"). Every
// body either process reads goes through it, and so does JSON found inside one (a job's param read by a
// handler); `what` names the text in the error ("body", "the param").
absl::StatusOr<nlohmann::json> ParseJson(std::string_view body, std::string_view what = "body");

// `j` as compact text; invalid UTF-8 in its strings is replaced by U+FFFD instead of throwing (text from
// job output and user input is not guaranteed to be UTF-8).
std::string DumpLossy(const nlohmann::json& j);

// `v` as compact text for an error message: at most `max_bytes` (cut on a UTF-8 boundary, then "...").
std::string Shown(const nlohmann::json& v, std::size_t max_bytes = 80);

}  // namespace cronwheel

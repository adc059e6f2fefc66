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

// What a parse does with an object that names one key twice ({"url": "a", "url": "b"}). RFC 8259 §4 leaves
// it to the reader, and readers differ (nlohmann_json and most others keep the last, some the first), so a
// text spliced together from pieces can mean one thing to the code that checked it and another to the code
// that acts on it (security review 2, N3). kRefuse is for text that is an instruction, not a record: a
// job's parameter (docs/operations.md, "Passing a result to child jobs").
enum class DuplicateKeys { kLastWins, kRefuse };

// Parses a request body as JSON. An InvalidArgument status saying why for a syntax error ("body is not
// valid JSON: [json.exception.parse_error.101] ..."), a number outside the range of a double (1e400),
// nesting deeper than kMaxJsonDepth ("body nests JSON arrays and objects deeper than 64 levels") and, with
// DuplicateKeys::kRefuse, an object naming a key twice ("the param names the key 'url' twice in one
// object"). Every body either process reads goes through it, and so does JSON found inside one (a job's
// param read by a handler); `what` names the text in the error ("body", "the param"). Complexity: linear
// in the text; kRefuse adds a set of each open object's keys (O(k log k) per object of k keys).
absl::StatusOr<nlohmann::json> ParseJson(std::string_view body, std::string_view what = "body",
                                         DuplicateKeys duplicates = DuplicateKeys::kLastWins);
// The same, keeping each object's keys in the order the text gives them (nlohmann::ordered_json): for text
// that is parsed, changed and written back (the admin's parameter templates, admin/model/parent_refs.hpp).
absl::StatusOr<nlohmann::ordered_json> ParseOrderedJson(std::string_view text, std::string_view what,
                                                        DuplicateKeys duplicates);

// `j` as compact text; invalid UTF-8 in its strings is replaced by U+FFFD instead of throwing (text from
// job output and user input is not guaranteed to be UTF-8).
std::string DumpLossy(const nlohmann::json& j);

// `v` as compact text for an error message: at most `max_bytes` (cut on a UTF-8 boundary, then "...").
std::string Shown(const nlohmann::json& v, std::size_t max_bytes = 80);

}  // namespace cronwheel

#pragma once
// Text helpers shared by the admin and the executor. Pure functions; thread-safe.
//
// UTF-8: every function that shortens text cuts only between code points, never inside a multi-byte
// sequence, so what it returns is valid UTF-8 whenever its input was.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cronwheel {

// True when `s` holds nothing but spaces, tabs, CR and LF.
bool IsBlank(std::string_view s);

// `s` without leading and trailing ASCII white space.
std::string_view Trim(std::string_view s);

// "a, b,,c " -> {"a", "b", "c"}: split on ',', each part trimmed, empty parts dropped.
std::vector<std::string> SplitCommas(std::string_view s);

// The longest prefix of `s` that is at most `max_bytes` long and ends on a code point boundary.
// O(1) amortised: it looks back at most 3 bytes from the cut.
std::string_view Utf8Prefix(std::string_view s, std::size_t max_bytes);

// `s` cut to at most `max_bytes` (Utf8Prefix) followed by `marker` when it was longer; unchanged when it
// fits. The marker is not counted in `max_bytes`. For messages quoting user input and for XXL-JOB's
// truncated handle messages (docs/xxl-job-protocol.md §9, §11).
std::string Utf8Truncate(std::string_view s, std::size_t max_bytes, std::string_view marker = "...");

// `s` with each NUL byte replaced by U+FFFD: for text stored in PostgreSQL, whose text type holds no NUL
// (a JSON string's \u0000 is refused as "unsupported Unicode escape sequence": one in a callback's handle
// message failed the whole batch's statement).
std::string WithoutNulBytes(std::string s);

}  // namespace cronwheel

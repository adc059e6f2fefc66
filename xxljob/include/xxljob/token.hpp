#pragma once
// The access token check of both directions (docs/xxl-job-protocol.md §1). XXL-JOB compares with
// String.equals, whose time depends on where the strings differ; here both are hashed with SHA-256 and the
// digests compared with sodium_memcmp, so the time says nothing about the token.
//
// Thread-safety: a pure function.

#include <string_view>

namespace cronwheel::xxljob {

// Whether a token received in the header equals the configured one. An empty `expected` means no token is
// configured: anything matches (dialect A/B behaviour; a production admin or executor refuses to start
// that way).
bool TokenMatches(std::string_view given, std::string_view expected);

}  // namespace cronwheel::xxljob

#pragma once
// HTTP framing rules of XXL-JOB's protocol as both cronwheel servers apply them (docs/xxl-job-protocol.md
// §1): bodies up to 5 MiB, POST only, and the messages for requests that break those rules.
//
// Thread-safety: constants and pure functions.

#include <cstddef>
#include <string>
#include <string_view>

namespace cronwheel::xxljob {

// Request bodies above this are refused (XXL-JOB's executor: 5 MiB).
inline constexpr std::size_t kMaxBodyBytes = std::size_t{5} * 1024 * 1024;

// XXL-JOB's message for a request with a method the protocol does not take.
inline constexpr std::string_view kMethodNotSupported = "invalid request, HttpMethod not support.";

// XXL-JOB's message for a path the receiver does not serve: "invalid request, uri-mapping(<uri>) not
// found." (the uri cut to 200 bytes).
std::string UriNotFound(std::string_view uri);

// Whether a request carries a body its server leaves unread: cpp-httplib 0.11 reads a body only for POST,
// PUT, PATCH and DELETE, so the body of a GET (or another method) would stay in the connection and be read
// as the next request, whose answer would go to the caller's next request. Both servers (admin and
// executor) refuse such a request and close the connection. `content_length` is the header's value ("" if
// absent).
bool HasUnreadBody(std::string_view method, bool has_transfer_encoding, std::string_view content_length);

}  // namespace cronwheel::xxljob

#pragma once
// cwbase (base/): the error convention's helpers, below every other library (ringwheel's schedules blame
// fields with them; common, xxljob, the executor, the CLI and the admin use them too).
//
// The error convention of the libraries below the admin (docs/architecture.md, "Errors"): an outcome a
// caller must expect (input that does not parse, a check that refuses, a file that cannot be read) is an
// absl::Status or absl::StatusOr<T>; its message is the full English text for the user, naming the field,
// the value and what is valid. Infrastructure failures (sockets, threads, a database) are exceptions.
//
// A status may also name the field to blame ("schedule_type", "schedule_conf", "time_zone"), so that the
// admin can answer with a per-field error: the name rides as an Abseil payload under kFieldPayloadUrl.
//
// Thread-safety: the functions are pure.

#include <absl/status/status.h>

#include <string>
#include <string_view>

namespace cronwheel {

// The payload type URL under which FieldError stores the field name.
inline constexpr std::string_view kFieldPayloadUrl = "cronwheel.field";

// An InvalidArgument status with `message` that names `field` (read back with ErrorField), e.g.
//   FieldError("time_zone", "unknown time zone 'Mars/Base'; use an IANA name such as 'UTC' or ...").
absl::Status FieldError(std::string_view field, std::string_view message);

// The field that `status` names (FieldError), or "" when it names none (an OK status names none).
std::string ErrorField(const absl::Status& status);

// An error status for a failed system call's `err` (errno) with `message` as its whole text: the code
// follows errno (absl::ErrnoToStatusCode: ENOENT NotFound, EACCES PermissionDenied, ...; Unknown when `err`
// is 0, so the result is never OK), e.g.
//   ErrnoError(ENOENT, "cannot read 'jobs.json': No such file or directory").
absl::Status ErrnoError(int err, std::string_view message);

}  // namespace cronwheel

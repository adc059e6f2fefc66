#pragma once
// The admin's one way to report an expected failure: Result<T> holds a value or an Error. Infrastructure
// failures (the database is down, a socket broke) are exceptions caught at a boundary (the HTTP server, a
// PeriodicTask); outcomes a caller must handle (bad input, not found, a conflict, refused credentials) are
// Results. Every Error says what is wrong in a sentence naming the value and what would be valid; errors
// about a request's fields also list one FieldError per field, each with a stable `code` and `params` so
// the console can show it in the user's language (docs/architecture.md, "Errors").
//
// Nothing here knows HTTP: the REST API turns an Error into its HTTP status and the body
//   {"error": message, "code": kind, "errors": [{"field", "message", "code", "params"}]}
// (api/routes.hpp: ErrorBody and the status mapping). A FieldError's `params` is a JSON value because it
// is data the console reads (docs/architecture.md, "Errors").
//
// Plain values; no thread-safety concerns.

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cronwheel::admin {

// One problem with one field of a request. `code` values (docs/architecture.md): required, type, length,
// range, enum, unknown_field, exists, not_found, format, schedule, policy; "" when none fits (the console
// then shows `message` as it is).
struct FieldError {
  std::string field;    // the JSON field name; "" for the body itself
  std::string message;  // English, naming the value and what is valid
  std::string code;
  nlohmann::json params = nlohmann::json::object();  // e.g. {"min": 1, "max": 255, "actual": 300}
};
using FieldErrors = std::vector<FieldError>;

enum class ErrorKind {
  kInvalid,          // 400: the request is not valid (fields says which parts)
  kUnauthenticated,  // 401
  kForbidden,        // 403
  kNotFound,         // 404
  kConflict,         // 409: valid, but the current state does not allow it
  kThrottled,        // 429: retry_after says when
  kUnavailable,      // 503: a dependency (the database) is unavailable
};

struct Error {
  ErrorKind kind = ErrorKind::kInvalid;
  std::string message;
  FieldErrors fields;
  std::chrono::milliseconds retry_after{0};  // kThrottled

  static Error Invalid(std::string message, FieldErrors fields = {}) {
    return {ErrorKind::kInvalid, std::move(message), std::move(fields)};
  }
  static Error NotFound(std::string message) { return {ErrorKind::kNotFound, std::move(message)}; }
  static Error Conflict(std::string message) { return {ErrorKind::kConflict, std::move(message)}; }
  static Error Forbidden(std::string message) { return {ErrorKind::kForbidden, std::move(message)}; }
  static Error Unauthenticated(std::string message) {
    return {ErrorKind::kUnauthenticated, std::move(message)};
  }
  static Error Throttled(std::string message, std::chrono::milliseconds retry_after) {
    return {ErrorKind::kThrottled, std::move(message), {}, retry_after};
  }
};

// "invalid", "unauthenticated", "forbidden", "not_found", "conflict", "throttled", "unavailable".
std::string_view ToString(ErrorKind kind);

// The database cannot be reached, or has no connection free in time: an infrastructure failure, thrown by
// the store (store/pg_util.hpp, WithConnection) and answered 503 at the HTTP boundary, retried by the
// periodic tasks (docs/architecture.md, "Errors").
class DatabaseUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The connection was lost while a transaction was committing (a primary killed or failed over mid-COMMIT):
// whether it committed is not known. It may have: with synchronous replication the new primary holds every
// commit that was acknowledged, and may also hold one that was not. Callers that wrote fires resolve the
// outcome from the database once it answers again (docs/architecture.md, "When the primary dies"):
// the scheduler adopts its own unclaimed fires, and a claim in doubt is released and taken again by its
// stamp (schedule/scheduler.hpp). Answered 503 at the HTTP boundary, like any DatabaseUnavailable.
class CommitOutcomeUnknown : public DatabaseUnavailable {
 public:
  using DatabaseUnavailable::DatabaseUnavailable;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor): return a value
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor): or an error

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  // Precondition: ok().
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  // Precondition: !ok().
  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor): an error
  static Result Ok() { return {}; }

  [[nodiscard]] bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  // Precondition: !ok().
  [[nodiscard]] const Error& error() const { return *error_; }

 private:
  std::optional<Error> error_;
};

}  // namespace cronwheel::admin

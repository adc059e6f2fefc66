#pragma once
// Reading typed fields out of a JSON request body, one FieldError (with a translation code, model/result.hpp)
// per problem. Private to the request-body readers (api/request_bodies.hpp).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "admin/model/result.hpp"
#include "cronwheel/json.hpp"

namespace cronwheel::admin::bodies {

using nlohmann::json;

// A JSON value quoted in a message: at most 60 bytes.
inline std::string Quote(const json& v) {
  return Shown(v, 60);
}

inline FieldError Required(std::string field) {
  return {std::move(field), "is required", "required"};
}

inline FieldError WrongType(std::string field, const json& v, const char* expected, const char* what) {
  return {
      std::move(field), fmt::format("expected {}, got {}", what, Quote(v)), "type", {{"expected", expected}}};
}

inline FieldError NotAnObject(const json& body, std::string_view what = "a JSON object") {
  return {
      "", fmt::format("the body must be {}, got {}", what, Quote(body)), "type", {{"expected", "object"}}};
}

inline FieldError UnknownField(const std::string& field, const std::set<std::string>& allowed) {
  const auto list = fmt::format("{}", fmt::join(allowed, ", "));
  return {
      field, fmt::format("unknown field; the fields are: {}", list), "unknown_field", {{"allowed", list}}};
}

// Reads typed fields of a JSON object body, collecting a FieldError per problem. A field in error leaves
// its output unchanged.
class BodyReader {
 public:
  BodyReader(const json& body, FieldErrors& errors) : body_(body), errors_(errors) {
    if (!body_.is_object()) errors_.push_back(NotAnObject(body_));
  }

  const json* Get(const char* name, bool required) {
    known_.insert(name);
    if (!body_.is_object()) return nullptr;
    auto it = body_.find(name);
    if (it == body_.end()) {
      if (required) errors_.push_back(Required(name));
      return nullptr;
    }
    return &*it;
  }

  void String(const char* name, std::string& out, bool required, std::size_t max_len,
              std::size_t min_len = 0) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_string()) return errors_.push_back(WrongType(name, *v, "string", "a string"));
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() < min_len || s.size() > max_len) {
      return errors_.push_back(
          {name,
           min_len > 0 ? fmt::format("must be {} to {} characters, got {}", min_len, max_len, s.size())
                       : fmt::format("must be at most {} bytes, got {}", max_len, s.size()),
           "length",
           {{"min", min_len}, {"max", max_len}, {"actual", s.size()}}});
    }
    out = s;
  }

  void Int(const char* name, int& out, bool required, int min, int max) {
    std::int64_t n = out;
    Int64(name, n, required, min, max);
    out = static_cast<int>(n);
  }

  void Int64(const char* name, std::int64_t& out, bool required, std::int64_t min, std::int64_t max) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_number_integer()) return errors_.push_back(WrongType(name, *v, "integer", "an integer"));
    const auto n = v->is_number_unsigned()
                       ? static_cast<std::int64_t>(std::min<std::uint64_t>(
                             v->get<std::uint64_t>(), static_cast<std::uint64_t>(INT64_MAX)))
                       : v->get<std::int64_t>();
    if (n < min || n > max) {
      return errors_.push_back({name,
                                fmt::format("must be from {} to {}, got {}", min, max, n),
                                "range",
                                {{"min", min}, {"max", max}, {"actual", n}}});
    }
    out = n;
  }

  void Bool(const char* name, bool& out, bool required) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_boolean()) return errors_.push_back(WrongType(name, *v, "boolean", "true or false"));
    out = v->get<bool>();
  }

  template <class E>
  void Enum(const char* name, E& out, bool required, std::optional<E> (*parse)(std::string_view)) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    const auto e = v->is_string() ? parse(v->get<std::string>()) : std::nullopt;
    if (!e) {
      return errors_.push_back({name,
                                fmt::format("{} is not valid; use one of {}", Quote(*v), ValidValues(E{})),
                                "enum",
                                {{"allowed", ValidValues(E{})}}});
    }
    out = *e;
  }

  // Positive ids, each `what` in messages ("a job id").
  void IntArray(const char* name, std::vector<int>& out, bool required, std::size_t max_items,
                const char* what = "a job id") {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_array()) return errors_.push_back(WrongType(name, *v, "array", "an array of ids"));
    if (v->size() > max_items) return Error(name, fmt::format("at most {} items", max_items));
    std::vector<int> items;
    for (const auto& e : *v) {
      if (!e.is_number_integer() || e.get<std::int64_t>() <= 0 || e.get<std::int64_t>() > INT32_MAX) {
        return Error(name, fmt::format("{} is not {} (a positive integer)", Quote(e), what));
      }
      items.push_back(e.get<int>());
    }
    out = std::move(items);
  }

  void StringArray(const char* name, std::vector<std::string>& out, bool required, std::size_t max_items) {
    const json* v = Get(name, required);
    if (v == nullptr) return;
    if (!v->is_array()) return errors_.push_back(WrongType(name, *v, "array", "an array of strings"));
    if (v->size() > max_items) return Error(name, fmt::format("at most {} items", max_items));
    std::vector<std::string> items;
    for (const auto& e : *v) {
      if (!e.is_string()) return Error(name, fmt::format("{} is not a string", Quote(e)));
      items.push_back(e.get<std::string>());
    }
    out = std::move(items);
  }

  void OptionalString(const char* name, std::optional<std::string>& out, std::size_t max_len) {
    const json* v = Get(name, false);
    if (v == nullptr) return;
    if (v->is_null()) {
      out.reset();
      return;
    }
    std::string s;
    String(name, s, false, max_len);
    out = s;
  }

  // Every field not read is unknown.
  void RejectUnknown() {
    if (!body_.is_object()) return;
    for (const auto& [k, v] : body_.items()) {
      if (!known_.contains(k)) errors_.push_back(UnknownField(k, known_));
    }
  }

  void Error(const char* name, std::string msg) { errors_.push_back({name, std::move(msg)}); }

 private:
  const json& body_;
  FieldErrors& errors_;
  std::set<std::string> known_;
};

// The JSON object `body` holds only `allowed` fields; records an error for anything else.
inline bool CheckObject(const json& body, const std::set<std::string>& allowed, FieldErrors& errors) {
  if (!body.is_object()) {
    errors.push_back(NotAnObject(body));
    return false;
  }
  for (const auto& [k, v] : body.items()) {
    if (!allowed.contains(k)) errors.push_back(UnknownField(k, allowed));
  }
  return true;
}

inline std::optional<std::string> StringField(const json& body, const char* name, bool required,
                                              FieldErrors& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) {
    if (required) errors.push_back(Required(name));
    return std::nullopt;
  }
  if (!it->is_string()) {
    errors.push_back(WrongType(name, *it, "string", "a string"));
    return std::nullopt;
  }
  return it->get<std::string>();
}

inline std::optional<std::int64_t> IntField(const json& body, const char* name, std::int64_t min,
                                            std::int64_t max, FieldErrors& errors) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || (it->is_number_unsigned() && it->get<std::uint64_t>() > INT64_MAX) ||
      it->get<std::int64_t>() < min || it->get<std::int64_t>() > max) {
    errors.push_back({name,
                      fmt::format("{} is not valid: an integer from {} to {}", Quote(*it), min, max),
                      "range",
                      {{"min", min}, {"max", max}}});
    return std::nullopt;
  }
  return it->get<std::int64_t>();
}

// `value` when `errors` is empty, else Error::Invalid(message, errors).
template <class T>
Result<T> Checked(T value, FieldErrors errors, const char* message) {
  if (!errors.empty()) return Error::Invalid(message, std::move(errors));
  return value;
}

}  // namespace cronwheel::admin::bodies

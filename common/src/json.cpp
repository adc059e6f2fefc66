#include "cronwheel/json.hpp"

#include <fmt/format.h>

#include "cronwheel/text.hpp"

namespace cronwheel {

absl::StatusOr<nlohmann::json> ParseJson(std::string_view body, std::string_view what) {
  using nlohmann::json;
  // nlohmann's parser keeps its own stack (it does not recurse); its callback sees the depth of every
  // array and object as it starts (0 for the outermost), so the parse stops at the first one too deep.
  struct TooDeep {};
  const json::parser_callback_t limit = [](int depth, json::parse_event_t event, json&) {
    if ((event == json::parse_event_t::object_start || event == json::parse_event_t::array_start) &&
        depth >= kMaxJsonDepth) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    return json::parse(body.begin(), body.end(), limit);
  } catch (const TooDeep&) {
    return absl::InvalidArgumentError(
        fmt::format("{} nests JSON arrays and objects deeper than {} levels", what, kMaxJsonDepth));
  } catch (const json::exception& e) {  // parse_error, and out_of_range for a number too large (406)
    return absl::InvalidArgumentError(fmt::format("{} is not valid JSON: {}", what, e.what()));
  }
}

std::string DumpLossy(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string Shown(const nlohmann::json& v, std::size_t max_bytes) {
  auto text = DumpLossy(v);
  if (text.size() <= max_bytes) return text;
  return Utf8Truncate(text, max_bytes > 3 ? max_bytes - 3 : max_bytes);
}

}  // namespace cronwheel

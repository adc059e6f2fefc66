#include "cronwheel/json.hpp"

#include <fmt/format.h>

#include "cronwheel/text.hpp"

namespace cronwheel {

namespace {

struct TooDeep {};

// nlohmann's own DOM builder, counting the arrays and objects open: the parse stops at the first one that
// would be deeper than kMaxJsonDepth, before it is built. json::parse with a parser callback did the same at
// 1.1 to 1.6 times the cost of the plain parse (the callback parser keeps stacks of its own and calls a
// std::function for every value), and every batch of runs an executor reads goes through it (bench/protocol;
// docs/performance.md, "Four costs found by profiling"). sax_parse calls these members on this type, so
// hiding the base's is enough.
class DepthLimitedDom : public nlohmann::detail::json_sax_dom_parser<nlohmann::json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<nlohmann::json>;
  explicit DepthLimitedDom(nlohmann::json& result) : Base(result, /*allow_exceptions_=*/true) {}

  bool start_object(std::size_t n) {
    Enter();
    return Base::start_object(n);
  }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool start_array(std::size_t n) {
    Enter();
    return Base::start_array(n);
  }
  bool end_array() {
    --depth_;
    return Base::end_array();
  }

 private:
  void Enter() {
    if (++depth_ > kMaxJsonDepth) throw TooDeep{};
  }
  int depth_ = 0;
};

}  // namespace

absl::StatusOr<nlohmann::json> ParseJson(std::string_view body, std::string_view what) {
  using nlohmann::json;
  try {
    json result;
    DepthLimitedDom dom(result);
    json::sax_parse(body.begin(), body.end(), &dom);  // throws parse errors (allow_exceptions_)
    return result;
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

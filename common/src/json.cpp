#include "cronwheel/json.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "cronwheel/text.hpp"

namespace cronwheel {

namespace {

struct TooDeep {};
struct DuplicateKey {
  std::string key;
};

// nlohmann's own DOM builder, counting the arrays and objects open: the parse stops at the first one that
// would be deeper than kMaxJsonDepth, before it is built. json::parse with a parser callback did the same at
// 1.1 to 1.6 times the cost of the plain parse (the callback parser keeps stacks of its own and calls a
// std::function for every value), and every batch of runs an executor reads goes through it (bench/protocol;
// docs/performance.md, "Four costs found by profiling"). sax_parse calls these members on this type, so
// hiding the base's is enough. With `refuse_duplicates`, each open object's keys are kept (a set per level)
// and a key seen twice in one object stops the parse; without it nothing more is kept.
template <class Json>
class DepthLimitedDom : public nlohmann::detail::json_sax_dom_parser<Json> {
 public:
  using Base = nlohmann::detail::json_sax_dom_parser<Json>;
  DepthLimitedDom(Json& result, bool refuse_duplicates)
      : Base(result, /*allow_exceptions_=*/true), refuse_duplicates_(refuse_duplicates) {}

  bool start_object(std::size_t n) {
    Enter();
    if (refuse_duplicates_) keys_.emplace_back();
    return Base::start_object(n);
  }
  bool key(typename Json::string_t& k) {
    if (refuse_duplicates_ && !keys_.back().insert(k).second) throw DuplicateKey{k};
    return Base::key(k);
  }
  bool end_object() {
    --depth_;
    if (refuse_duplicates_) keys_.pop_back();
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
  bool refuse_duplicates_ = false;
  std::vector<std::set<std::string>> keys_;  // the keys of each open object, innermost last
};

template <class Json>
absl::StatusOr<Json> Parse(std::string_view body, std::string_view what, DuplicateKeys duplicates) {
  try {
    Json result;
    DepthLimitedDom<Json> dom(result, duplicates == DuplicateKeys::kRefuse);
    Json::sax_parse(body.begin(), body.end(), &dom);  // throws parse errors (allow_exceptions_)
    return result;
  } catch (const TooDeep&) {
    return absl::InvalidArgumentError(
        fmt::format("{} nests JSON arrays and objects deeper than {} levels", what, kMaxJsonDepth));
  } catch (const DuplicateKey& d) {
    return absl::InvalidArgumentError(fmt::format(
        "{} names the key '{}' twice in one object: a duplicate key is refused (readers differ on which one "
        "counts)",
        what, Utf8Truncate(d.key, 64)));
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for a number too large
    return absl::InvalidArgumentError(fmt::format("{} is not valid JSON: {}", what, e.what()));
  }
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJson(std::string_view body, std::string_view what,
                                         DuplicateKeys duplicates) {
  return Parse<nlohmann::json>(body, what, duplicates);
}

absl::StatusOr<nlohmann::ordered_json> ParseOrderedJson(std::string_view text, std::string_view what,
                                                        DuplicateKeys duplicates) {
  return Parse<nlohmann::ordered_json>(text, what, duplicates);
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

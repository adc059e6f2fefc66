#include "xxljob/framing.hpp"

#include <fmt/format.h>

namespace cronwheel::xxljob {

std::string UriNotFound(std::string_view uri) {
  return fmt::format("invalid request, uri-mapping({}) not found.", uri.substr(0, 200));
}

bool HasUnreadBody(std::string_view method, bool has_transfer_encoding, std::string_view content_length) {
  if (method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE") return false;
  return has_transfer_encoding || (!content_length.empty() && content_length != "0");
}

}  // namespace cronwheel::xxljob

// The insertion rules of admin/model/parent_refs.hpp (security review 2, N3). A value is data: in JSON it is
// put into the parsed document (a value, or text inside a string) and the document is written back, so no
// value can close a string, add a key or name one twice; in a URL it is percent-encoded; in other text it
// goes in only when it is made of characters that separate nothing.
#include "model/param_insertion.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <vector>

#include "cronwheel/json.hpp"
#include "cronwheel/net/http_message.hpp"
#include "cronwheel/text.hpp"

namespace cronwheel::admin::param_insertion {
namespace {

using Value = nlohmann::ordered_json;

// What a reference standing alone as a JSON value is replaced by before the parse ("\u0001cwref:N", N its
// index): a string no parameter writes by accident, found again in the parsed document.
constexpr std::string_view kMarker =
    "\x01"
    "cwref:";

struct Found {
  std::size_t begin = 0;  // "{{" in the text
  std::size_t end = 0;    // past "}}"
  std::string name;
  RefValue value;
};

// A name may not hold what would let a reference reach across a JSON string's end.
bool NameOk(std::string_view name) {
  if (name.empty()) return false;
  for (const char c : name) {
    if (c == '"' || c == '\\' || c == '{' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

// The references `lookup` knows in `text`, in order. Linear: a "}}" found is reused for the "{{" before it.
std::vector<Found> FindRefs(std::string_view text, const Lookup& lookup) {
  std::vector<Found> out;
  std::size_t pos = 0;
  std::size_t close = std::string_view::npos;
  while (pos < text.size()) {
    const auto open = text.find("{{", pos);
    if (open == std::string_view::npos) break;
    if (close == std::string_view::npos || close < open + 2) close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;  // no end: the rest is text
    const auto name = text.substr(open + 2, close - open - 2);
    if (NameOk(name)) {
      if (auto v = lookup(name)) {
        out.push_back({open, close + 2, std::string(name), std::move(*v)});
        pos = close + 2;
        close = std::string_view::npos;
        continue;
      }
    }
    pos = open + 1;
  }
  return out;
}

std::string Text(const Value& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump(-1, ' ', false, Value::error_handler_t::replace);
}

// The value's text, or '' with a note when it has none.
std::string TextOf(const Found& f, ResolvedParam& out) {
  if (f.value.value) return Text(*f.value.value);
  out.notes.push_back(fmt::format("parameter: {{{{{}}}}} replaced by '': {}", f.name, f.value.why));
  return "";
}

bool StartsWithHttp(std::string_view s) {
  const auto lower = [&](std::size_t n) {
    std::string out(s.substr(0, n));
    for (auto& c : out)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return lower(7) == "http://" || lower(8) == "https://";
}

// A value a text parameter takes: what separates nothing in the usual ways of splitting text (blanks,
// quotes, '=', '&', ';', ',', braces, shell syntax).
bool PlainToken(std::string_view s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) == 0 && c != '.' && c != '_' && c != '-' && c != ':' && c != '/' && c != '@' &&
        c != '+') {
      return false;
    }
  }
  return true;
}

std::string Cut(std::string_view s) {
  return s.size() <= 40 ? std::string(s) : Utf8Truncate(s, 37);
}

// `text` with each of `refs` replaced by what `value` gives; nullopt (and out.refused set) when one refuses.
template <class Each>
std::optional<std::string> Splice(std::string_view text, const std::vector<Found>& refs, const Each& value) {
  std::string s;
  std::size_t pos = 0;
  for (const auto& f : refs) {
    s.append(text.substr(pos, f.begin - pos));
    auto v = value(f);
    if (!v) return std::nullopt;
    s += *v;
    pos = f.end;
  }
  s.append(text.substr(pos));
  return s;
}

// A URL's text (it starts with http:// or https://): each value percent-encoded, after the host only.
std::optional<std::string> InUrl(std::string_view url, const std::vector<Found>& refs, ResolvedParam& out) {
  const auto path_start = url.find_first_of("/?#", url.find("://") + 3);
  return Splice(url, refs, [&](const Found& f) -> std::optional<std::string> {
    if (f.begin < path_start) {
      out.refused = fmt::format(
          "{{{{{}}}}} stands in the scheme or host of the URL '{}': a value may go only into a URL's path, "
          "query or fragment",
          f.name, Cut(url));
      return std::nullopt;
    }
    auto encoded = net::PercentEncode(TextOf(f, out));
    if (encoded == "." || encoded == "..") {
      out.refused = fmt::format("the value of {{{{{}}}}} is '{}', a dot segment: it cannot go into a URL",
                                f.name, encoded);
      return std::nullopt;
    }
    return encoded;
  });
}

// Other text: a value goes in only when it is a plain token.
std::optional<std::string> InText(std::string_view text, const std::vector<Found>& refs, ResolvedParam& out) {
  return Splice(text, refs, [&](const Found& f) -> std::optional<std::string> {
    auto v = TextOf(f, out);
    if (!PlainToken(v)) {
      out.refused = fmt::format(
          "the value of {{{{{}}}}} ('{}') cannot go into a text parameter: there a value may hold only "
          "letters, digits and . _ - : / @ + (other characters could change what the parameter says); "
          "make the parameter JSON and put the reference in a string, or let it stand alone as the whole "
          "parameter",
          f.name, Cut(v));
      return std::nullopt;
    }
    return v;
  });
}

// A JSON string's text with its references: a string that is one reference becomes the value's text; a URL
// takes percent-encoded values; any other string the values' text (JSON-escaped when written).
std::optional<std::string> InString(std::string_view s, const std::vector<Found>& refs, ResolvedParam& out) {
  if (refs.size() == 1 && refs[0].begin == 0 && refs[0].end == s.size()) return TextOf(refs[0], out);
  if (StartsWithHttp(s)) return InUrl(s, refs, out);
  return Splice(s, refs, [&](const Found& f) -> std::optional<std::string> { return TextOf(f, out); });
}

bool Walk(Value& v, const std::vector<Found>& alone, const Lookup& lookup, ResolvedParam& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const auto& key = it.key();
      if (key.starts_with(kMarker) || !FindRefs(key, lookup).empty()) {
        out.refused = fmt::format(
            "a reference stands in an object key ('{}'): a value may not choose the parameter's keys",
            key.starts_with(kMarker) ? "{{...}}" : Cut(key));
        return false;
      }
      if (!Walk(it.value(), alone, lookup, out)) return false;
    }
    return true;
  }
  if (v.is_array()) {
    for (auto& e : v) {
      if (!Walk(e, alone, lookup, out)) return false;
    }
    return true;
  }
  if (!v.is_string()) return true;
  const auto& s = v.get_ref<const std::string&>();
  if (s.starts_with(kMarker)) {
    std::size_t i = 0;
    const auto digits = std::string_view(s).substr(kMarker.size());
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
    if (ec == std::errc{} && end == digits.data() + digits.size() && i < alone.size()) {
      const auto& f = alone[i];
      if (!f.value.value) {
        out.notes.push_back(fmt::format("parameter: {{{{{}}}}} replaced by null: {}", f.name, f.value.why));
      }
      v = f.value.value ? *f.value.value : Value(nullptr);
      return true;
    }
  }
  const auto refs = FindRefs(s, lookup);
  if (refs.empty()) return true;
  auto replaced = InString(s, refs, out);
  if (!replaced) return false;
  v = std::move(*replaced);
  return true;
}

// A JSON parameter: the references outside strings become markers, the text is parsed (duplicate keys
// refused), the values go into the document, and the document is written back.
std::optional<std::string> InJson(std::string_view param, const std::vector<Found>& refs,
                                  const Lookup& lookup, ResolvedParam& out) {
  std::string text;
  text.reserve(param.size());
  std::vector<Found> alone;
  bool in_string = false;
  bool escaped = false;
  std::size_t next = 0;  // the next reference of `refs`
  for (std::size_t i = 0; i < param.size(); ++i) {
    if (next < refs.size() && i == refs[next].begin) {
      if (!in_string) {
        text += fmt::format(R"("\u0001cwref:{}")", alone.size());  // kMarker, as JSON text
        alone.push_back(refs[next]);
        i = refs[next].end - 1;
        ++next;
        continue;
      }
      ++next;  // inside a string: found again in the parsed document
    }
    const char c = param[i];
    text += c;
    if (escaped) {
      escaped = false;
    } else if (in_string && c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in_string = !in_string;
    }
  }
  auto doc = ParseOrderedJson(text, "the parameter", DuplicateKeys::kRefuse);
  if (!doc.ok()) {
    out.refused = fmt::format(
        "the parameter is read as JSON (it starts with '{}'), and once each reference outside a string is "
        "taken as one value, {}; in a JSON parameter a reference goes inside a string (\"id={{{{parent."
        "output.id}}}}\") or stands alone as a value ({{\"rows\": {{{{parent.output.rows}}}}}})",
        Trim(param).front(), std::string(doc.status().message()));
    return std::nullopt;
  }
  if (!Walk(*doc, alone, lookup, out)) return std::nullopt;
  return doc->dump(-1, ' ', false, Value::error_handler_t::replace);
}

}  // namespace

ResolvedParam Insert(std::string_view param, const Lookup& lookup) {
  ResolvedParam out;
  const auto refs = FindRefs(param, lookup);
  if (refs.empty()) {
    out.param = std::string(param);
    return out;
  }
  const auto t = Trim(param);
  const auto lead = static_cast<std::size_t>(t.data() - param.data());
  std::optional<std::string> done;
  if (refs.size() == 1 && refs[0].begin == lead && refs[0].end == lead + t.size()) {
    done = Splice(param, refs, [&](const Found& f) -> std::optional<std::string> { return TextOf(f, out); });
  } else if (t.starts_with('[') || (t.starts_with('{') && !t.starts_with("{{"))) {
    done = InJson(param, refs, lookup, out);
  } else if (StartsWithHttp(t)) {
    done = InUrl(param, refs, out);
  } else {
    done = InText(param, refs, out);
  }
  if (done) {
    out.param = std::move(*done);
  } else {
    out.param = std::string(param);
  }
  return out;
}

}  // namespace cronwheel::admin::param_insertion

// The webhook allow-list (admin/model/validation.hpp): a job's alarm_webhook must be under one of the
// operator's alarm_webhook_allow entries, compared as URLs, not as strings.
#include "admin/model/validation.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using cronwheel::admin::WebhookAllowed;

struct WebhookCase {
  const char* url;
  bool allowed;
  const char* why;
};

// Issue 21: with "https://hooks.example.com" allowed, a string prefix let
// "https://hooks.example.com.attacker.test" and "https://hooks.example.com:8443" through.
TEST(WebhookAllowed, ComparesSchemeHostPortAndPathNotStrings) {
  const std::vector<std::string> allow{"https://hooks.example.com", "http://10.0.0.7:8080/alerts/",
                                       "https://Chat.Example.org/api/hooks"};
  const std::vector<WebhookCase> cases{
      {"https://hooks.example.com", true, "the entry itself"},
      {"https://hooks.example.com/", true, "its root"},
      {"https://hooks.example.com/any/path", true, "no path in the entry: any path"},
      {"https://hooks.example.com:443/x", true, "the scheme's default port, written"},
      {"https://HOOKS.example.COM/x", true, "host names are case-insensitive"},
      {"https://hooks.example.com.attacker.test/", false, "another host that starts with the name"},
      {"https://hooks.example.com.attacker.test", false, "the same, without a path"},
      {"https://hooks.example.com:8443/", false, "another port"},
      {"https://hooks.example.com:8443", false, "another port, without a path"},
      {"http://hooks.example.com/", false, "another scheme"},
      {"https://user@hooks.example.com/", false, "user info"},
      {"https://hooks.example.com@attacker.test/", false, "user info naming the allowed host"},
      {"https://hooks.example.com/a?b=c", false, "a query does not parse as a webhook address"},
      {"https://hooks.example.com\\@attacker.test/", false, "a backslash"},
      {"hooks.example.com/x", false, "no scheme"},
      {"", false, "empty"},
      {"http://10.0.0.7:8080/alerts/cronwheel", true, "under the entry's path"},
      {"http://10.0.0.7:8080/alerts", true, "the entry's path itself"},
      {"http://10.0.0.7:8080/alertsX", false, "the path does not end at a '/' boundary"},
      {"http://10.0.0.7:8080/other", false, "another path"},
      {"http://10.0.0.7/alerts/x", false, "the default port is not 8080"},
      {"http://10.0.0.7:8080/alerts/../admin", false, "'..' leaves the path"},
      {"http://10.0.0.7:8080/alerts/%2e%2e/admin", false, "encoded '..'"},
      {"http://10.0.0.7:8080/alerts/%2E%2E/admin", false, "encoded '..', upper case"},
      {"http://10.0.0.7:8080/alerts/x%2fy", false, "an encoded '/'"},
      {"http://10.0.0.7:8080/alerts/./x", false, "a '.' segment"},
      {"http://10.0.0.7:8080//alerts/x", false, "'//'"},
      {"https://chat.example.org/api/hooks/T1/B2", true, "entry host case-insensitive too"},
      {"https://chat.example.org/api/hooksX", false, "boundary with a mixed-case entry"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(WebhookAllowed(c.url, allow), c.allowed) << c.url << " (" << c.why << ")";
  }
  EXPECT_FALSE(WebhookAllowed("https://hooks.example.com/", {})) << "nothing allowed";
  EXPECT_FALSE(WebhookAllowed("https://hooks.example.com/", {"", "  "})) << "empty entries allow nothing";
  EXPECT_FALSE(WebhookAllowed("https://hooks.example.com/", {"hooks.example.com"}))
      << "an entry that is no URL allows nothing";
}

// Issue 44, F7: "/hooks/..;/x" is "/hooks/../x" to Tomcat (it cuts ";..." path parameters from a segment),
// and "%252e%252e" is ".." to a server that decodes twice. The path is read as a server reads it, decoded
// once, and refused where servers differ.
TEST(WebhookAllowed, F7_APathIsComparedAsAServerRoutesItAndRefusedWhereServersDiffer) {
  const std::vector<std::string> allow{"https://hooks.example.com/hooks"};
  const std::vector<WebhookCase> cases{
      {"https://hooks.example.com/hooks/..;/admin", false, "'..;' is '..' to Tomcat"},
      {"https://hooks.example.com/hooks;a=b/x", false, "any path parameter"},
      {"https://hooks.example.com/hooks/%3b/x", false, "an encoded ';'"},
      {"https://hooks.example.com/hooks/%252e%252e/admin", false, "'..' after two decodings"},
      {"https://hooks.example.com/hooks/%252fadmin", false, "'/' after two decodings"},
      {"https://hooks.example.com/hooks/%25", false, "an encoded '%'"},
      {"https://hooks.example.com/hooks/.%2e/admin", false, "half-encoded '..'"},
      {"https://hooks.example.com/hooks/%5c..%5cadmin", false, "encoded '\\'"},
      {"https://hooks.example.com/hooks/%3f/x", false, "an encoded '?'"},
      {"https://hooks.example.com/hooks/%23/x", false, "an encoded '#'"},
      {"https://hooks.example.com/hooks/%c0%ae%c0%ae/admin", false, "overlong UTF-8 '.' (CVE-2008-2938)"},
      {"https://hooks.example.com/hooks/%00/x", false, "an encoded NUL"},
      {"https://hooks.example.com/hooks/%2", false, "a '%' without two hex digits"},
      {"https://hooks.example.com/hooks/%zz", false, "a '%' without hex digits"},
      {"https://hooks.example.com/hooks/.../x", false, "a segment of dots only"},
      {"https://hooks.example.com/hooks/..", false, "'..' at the end"},
      {"https://hooks.example.com/hooks/\xc3\xa9", false, "raw bytes outside printable ASCII"},
      {"https://hooks.example.com/hook%73/team-a", true, "'%73' is 's': the server routes /hooks/team-a"},
      {"https://hooks.example.com/hooks/team%2Da", true, "an encoded '-' is harmless"},
      {"https://hooks.example.com/hooks/v1.json", true, "a dot inside a segment"},
      {"https://hooks.example.com/hooks/..x", true, "a segment that only starts with dots"},
      {"https://hooks.example.com/hook%73X", false, "decoded '/hooksX' is not under '/hooks'"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(WebhookAllowed(c.url, allow), c.allowed) << c.url << " (" << c.why << ")";
  }
  // An entry is read the same way: "/%68ooks" allows what "/hooks" allows.
  EXPECT_TRUE(WebhookAllowed("https://hooks.example.com/hooks/x", {"https://hooks.example.com/%68ooks"}));
  const auto why = cronwheel::admin::ParseWebhookUrl("https://hooks.example.com/hooks/..;/admin");
  ASSERT_FALSE(why);
  EXPECT_NE(why.error().message.find("URL 'https://hooks.example.com/hooks/..;/admin' is not valid: its path "
                                     "must not hold ';'"),
            std::string::npos)
      << why.error().message;
  const auto twice = cronwheel::admin::ParseWebhookUrl("https://hooks.example.com/hooks/%252e%252e/admin");
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.error().message.find("must not hold %25"), std::string::npos) << twice.error().message;
}

TEST(WebhookAllowed, AnEntryThatIsNoUrlIsRefusedAtStartNamingIt) {
  EXPECT_TRUE(
      cronwheel::admin::CheckWebhookAllow({"https://hooks.example.com/", " ", "http://10.0.0.7:8080"}));
  for (const char* bad : {"hooks.example.com", "https://user@hooks.example.com/", "https://h/a?b",
                          "ftp://hooks.example.com/", "https://h/%2e%2e/"}) {
    const auto r = cronwheel::admin::CheckWebhookAllow({"https://ok.example.com/", bad});
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message.find("alarm_webhook_allow"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find(bad), std::string::npos) << r.error().message;
  }
}

}  // namespace

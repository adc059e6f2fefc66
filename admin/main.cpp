// cronwheel-admin: the scheduling center. Parses settings, wires the parts together and runs until
// SIGTERM/SIGINT. Logic lives in the admin library.
#include <csignal>
#include <httplib.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <thread>

#include "admin/migrations.hpp"
#include "admin/pg_pool.hpp"
#include "executor/settings.hpp"
#include "ringwheel/clock.hpp"

int main(int argc, char** argv) {
  std::string dsn;
  std::string listen = "127.0.0.1:8080";
  cronwheel::Settings settings("cronwheel-admin", "cronwheel scheduling center");
  settings.AddSecret("dsn", &dsn, "PostgreSQL URI, e.g. postgresql://user:pw@127.0.0.1:5432/cronwheel")
      .Add("listen", &listen, "host:port the console, REST API and executor API listen on");
  if (auto code = settings.Parse(argc, argv)) return *code;
  if (dsn.empty()) {
    spdlog::error("dsn is empty: set CRONWHEEL_DSN or --dsn (see --help)");
    return 2;
  }

  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto& clock = ringwheel::RealClock::Instance();
  cronwheel::admin::PgPool pool({.dsn = dsn});
  try {
    auto conn = pool.Acquire();
    const auto report =
        cronwheel::admin::ApplyMigrations(*conn, cronwheel::admin::BuiltInMigrations(), clock.NowMs());
    spdlog::info("schema at version {} ({} migration(s) applied now)", report.schema_version, report.applied);
  } catch (const std::exception& e) {
    spdlog::error("cannot prepare the database: {}", e.what());
    return 1;
  }

  httplib::Server server;
  server.Get("/api/v1/health", [&](const httplib::Request&, httplib::Response& res) {
    try {
      auto conn = pool.Acquire();
      pqxx::read_transaction tx(*conn);
      const auto version = tx.exec1("SELECT max(version) FROM schema_migrations")[0].as<int>();
      res.set_content(nlohmann::json{{"status", "ok"}, {"schema_version", version}}.dump(), "application/json");
    } catch (const std::exception& e) {
      res.status = 503;
      res.set_content(nlohmann::json{{"status", "unavailable"}, {"error", e.what()}}.dump(), "application/json");
    }
  });
  const auto colon = listen.rfind(':');
  const std::string host = listen.substr(0, colon);
  const int port = std::stoi(listen.substr(colon + 1));
  if (!server.bind_to_port(host, port)) {
    spdlog::error("cannot listen on {}", listen);
    return 1;
  }
  std::jthread http([&] { server.listen_after_bind(); });
  spdlog::info("cronwheel-admin listening on http://{}", listen);
  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("signal {}: shutting down", sig);
  server.stop();
  return 0;
}

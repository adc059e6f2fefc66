#pragma once
// The admin's services on the test database and a fake clock, behind a real ApiServer on a loopback port:
// the base of the REST API and console tests, which add the authenticator (and the console) they test.
#include <httplib.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "admin/api/server.hpp"
#include "admin/catalog/alert_channel_service.hpp"
#include "admin/catalog/calendar_service.hpp"
#include "admin/catalog/group_service.hpp"
#include "admin/catalog/job_service.hpp"
#include "admin/catalog/workflow_service.hpp"
#include "admin/dispatch/job_catalog.hpp"
#include "admin/results/callback_service.hpp"
#include "admin/schedule/scheduler.hpp"
#include "admin/store/pg_alert_channel_store.hpp"
#include "admin/store/pg_calendar_store.hpp"
#include "admin/store/pg_catalog_source.hpp"
#include "admin/store/pg_group_store.hpp"
#include "admin/store/pg_job_store.hpp"
#include "admin/store/pg_registry_store.hpp"
#include "admin/store/pg_result_store.hpp"
#include "admin/store/pg_scheduler_store.hpp"
#include "admin/store/pg_workflow_store.hpp"
#include "admin/store/trigger_result_writer.hpp"
#include "cwtest/fake_clock.hpp"
#include "pg_fixture.hpp"

namespace cwtest {

class ApiServerFixture : public PgFixture {
 protected:
  using FireSink = cronwheel::admin::FireSink;
  using Fires = std::vector<cronwheel::admin::Fire>;

  // Builds the services on a fake clock that reads `start_ms`, as node "node-a". Scheduled fires go to
  // `sink`; the fires a callback starts (child jobs) go to `on_child_fires`.
  void BuildServices(std::int64_t start_ms, FireSink& sink, std::function<void(Fires)> on_child_fires) {
    using namespace cronwheel::admin;
    clock_ = std::make_unique<FakeClock>(start_ms);
    catalog_source_ = std::make_unique<PgCatalogSource>(*pool_);
    catalog_ = std::make_unique<JobCatalog>(JobCatalog::Settings{.listen = false}, *clock_, *catalog_source_);
    group_store_ = std::make_unique<PgGroupStore>(*pool_);
    groups_ = std::make_unique<GroupService>(*clock_, *group_store_);
    alert_channel_store_ = std::make_unique<PgAlertChannelStore>(*pool_);
    alert_channels_ = std::make_unique<AlertChannelService>(*clock_, *alert_channel_store_);
    calendar_store_ = std::make_unique<PgCalendarStore>(*clock_, *pool_);
    calendars_ = std::make_unique<CalendarService>(*clock_, *calendar_store_);
    workflow_store_ = std::make_unique<PgWorkflowStore>(*clock_, *pool_);
    workflows_ = std::make_unique<WorkflowService>(*clock_, *workflow_store_, WorkflowService::Settings{});
    job_store_ = std::make_unique<PgJobStore>(*clock_, *pool_);
    repo_ = std::make_unique<JobService>(*clock_, *job_store_);
    logs_ = std::make_unique<LogRepository>(*clock_, *pool_);
    store_ = std::make_unique<PgSchedulerStore>(*pool_);
    scheduler_ =
        std::make_unique<Scheduler>(Scheduler::Settings{.node_id = "node-a"}, *clock_, *store_, sink);
    registry_store_ = std::make_unique<PgRegistryStore>(*pool_);
    registry_ = std::make_unique<RegistryService>(*clock_, *registry_store_);
    // Flushed only when asked (write_trigger_results, Flush): what a test records stays pending until then.
    writer_ = std::make_unique<TriggerResultWriter>(
        TriggerResultWriter::Settings{.flush_interval = std::chrono::hours(1)}, *clock_, *pool_);
    result_store_ = std::make_unique<PgResultStore>(*pool_, writer_.get());
    callbacks_ =
        std::make_unique<CallbackService>(*clock_, *result_store_, "node-a", std::move(on_child_fires));
  }

  // Starts the server on 127.0.0.1 (any free port, 4 threads, node "node-a") over the services built,
  // with `authenticator` and, when given, the console; then opens a client to it.
  void StartServer(cronwheel::admin::ApiServer::Settings settings,
                   cronwheel::admin::Authenticator& authenticator,
                   cronwheel::admin::ConsoleServices* console = nullptr) {
    using namespace cronwheel::admin;
    settings.host = "127.0.0.1";
    settings.port = 0;
    settings.threads = 4;
    settings.node_id = "node-a";
    alarms_ = std::make_unique<DefaultAlarmSender>(
        *clock_, DefaultAlarmSender::Settings{.webhook_allow = settings.webhook_allow,
                                              .timeout = std::chrono::milliseconds(2000)});
    server_ = std::make_unique<ApiServer>(
        std::move(settings),
        ApiServer::Services{.groups = *groups_,
                            .jobs = *repo_,
                            .logs = *logs_,
                            .scheduler = *scheduler_,
                            .catalog = *catalog_,
                            .registry = *registry_,
                            .callbacks = *callbacks_,
                            .authenticator = authenticator,
                            .health_details = health_details_,
                            .console = console,
                            .alert_channels = alert_channels_.get(),
                            .alarms = alarms_.get(),
                            .calendars = calendars_.get(),
                            .workflows = workflows_.get(),
                            .write_trigger_results = [this] { writer_->Flush(); }},
        *clock_);
    ASSERT_TRUE(server_->Start());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
    client_->set_read_timeout(10, 0);
  }

  void TearDown() override {
    if (server_) server_->Stop();
    if (scheduler_) scheduler_->Stop();
  }

  // One request on the client: GET, PUT and DELETE as named, anything else as a POST (JSON body).
  httplib::Result Send(const std::string& method, const std::string& path, const httplib::Headers& headers,
                       const std::string& body) {
    if (method == "GET") return client_->Get(path, headers);
    if (method == "PUT") return client_->Put(path, headers, body, "application/json");
    if (method == "DELETE") return client_->Delete(path, headers);
    return client_->Post(path, headers, body, "application/json");
  }

  // The `field` of each entry of a 4xx body's "errors", in order.
  static std::vector<std::string> Fields(const nlohmann::json& body) {
    std::vector<std::string> out;
    for (const auto& e : body.at("errors"))
      out.push_back(e.at("field"));
    return out;
  }

  std::unique_ptr<FakeClock> clock_;
  std::unique_ptr<cronwheel::admin::PgCatalogSource> catalog_source_;
  std::unique_ptr<cronwheel::admin::JobCatalog> catalog_;
  std::unique_ptr<cronwheel::admin::PgGroupStore> group_store_;
  std::unique_ptr<cronwheel::admin::GroupService> groups_;
  std::unique_ptr<cronwheel::admin::PgAlertChannelStore> alert_channel_store_;
  std::unique_ptr<cronwheel::admin::AlertChannelService> alert_channels_;
  std::unique_ptr<cronwheel::admin::PgCalendarStore> calendar_store_;
  std::unique_ptr<cronwheel::admin::CalendarService> calendars_;
  std::unique_ptr<cronwheel::admin::PgWorkflowStore> workflow_store_;
  std::unique_ptr<cronwheel::admin::WorkflowService> workflows_;
  std::unique_ptr<cronwheel::admin::DefaultAlarmSender> alarms_;
  std::unique_ptr<cronwheel::admin::PgJobStore> job_store_;
  std::unique_ptr<cronwheel::admin::JobService> repo_;
  std::unique_ptr<cronwheel::admin::LogRepository> logs_;
  std::unique_ptr<cronwheel::admin::PgSchedulerStore> store_;
  std::unique_ptr<cronwheel::admin::Scheduler> scheduler_;
  std::unique_ptr<cronwheel::admin::PgRegistryStore> registry_store_;
  std::unique_ptr<cronwheel::admin::RegistryService> registry_;
  std::unique_ptr<cronwheel::admin::TriggerResultWriter> writer_;  // the trigger results' writer
  std::unique_ptr<cronwheel::admin::PgResultStore> result_store_;
  std::unique_ptr<cronwheel::admin::CallbackService> callbacks_;
  std::unique_ptr<cronwheel::admin::ApiServer> server_;
  std::unique_ptr<httplib::Client> client_;
  // The extra fields of GET /api/v1/health (set before StartServer; none by default).
  std::function<nlohmann::json()> health_details_;
};

}  // namespace cwtest

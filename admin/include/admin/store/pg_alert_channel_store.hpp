#pragma once
// AlertChannelStore (catalog/alert_channel_store.hpp) on PostgreSQL: the owner of table alert_channel
// (sql/011_alert_channels.sql), with the statements the rules of alert channels
// (catalog/alert_channel_service.hpp) use and those of other tables they need (the channel lists of jobs
// and groups: store/job_table.hpp, store/group_table.hpp). No rule lives here. What the failure monitor
// and the alarm's claim ask of alert_channel, alert_state and alert_log is alert_channel_table
// (store/alert_channel_table.hpp).
//
// Thread-safety: safe from any thread (pooled connections). Errors: database failures throw
// (DatabaseUnavailable, CommitOutcomeUnknown: store/pg_util.hpp).

#include <functional>
#include <optional>
#include <vector>

#include "admin/catalog/alert_channel_store.hpp"
#include "admin/store/pg_pool.hpp"

namespace cronwheel::admin {

class PgAlertChannelStore final : public AlertChannelStore {
 public:
  explicit PgAlertChannelStore(PgPool& pool) : pool_(pool) {}

  void Transact(const std::function<bool(Tx&)>& body) override;
  std::optional<AlertChannel> Get(int id) override;
  std::vector<AlertChannel> List() override;
  std::vector<AlertEntry> ListAlerts(std::optional<int> job_id,
                                     const std::optional<std::vector<int>>& group_ids, int limit) override;

 private:
  PgPool& pool_;
};

}  // namespace cronwheel::admin

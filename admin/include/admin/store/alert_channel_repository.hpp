#pragma once
// Alert channels (table alert_channel, sql/011_alert_channels.sql; admin/model/alert_channel.hpp) on
// PostgreSQL: the table's owner. The REST API reads and checks a channel's fields (ReadAlertChannelBody,
// CheckAlertChannel) before it calls these; here is what needs the database: names are unique, and a
// deleted channel leaves every job and group that named it.
//
// Thread-safety: safe from any thread (pooled connections). Errors: expected outcomes are Results (kInvalid
// with fields, kNotFound); database failures throw.

#include <functional>
#include <optional>
#include <vector>

#include "admin/model/alert_channel.hpp"
#include "admin/model/result.hpp"
#include "admin/store/pg_pool.hpp"
#include "ringwheel/clock.hpp"

namespace cronwheel::admin {

// One alert decided (table alert_log): sent, held back, or being delivered.
struct AlertEntry {
  std::int64_t id = 0;
  int job_id = 0;
  int channel_id = 0;
  std::string channel_name;
  std::int64_t log_id = 0;
  std::string event;    // FAILED, TIMEOUT, LOST
  std::string outcome;  // SENT, FAILED, SENDING, RETRYING, SUPPRESSED, BELOW_THRESHOLD
  int attempts = 0;
  std::int64_t next_attempt_ms = 0;
  std::string message;
  std::int64_t created_ms = 0;
  std::int64_t updated_ms = 0;
};

class AlertChannelRepository {
 public:
  // Edits a channel in place (an update's fields over the stored ones); an error is returned as it is.
  using Edit = std::function<Result<void>(AlertChannel&)>;

  AlertChannelRepository(ringwheel::Clock& clock, PgPool& pool) : clock_(clock), pool_(pool) {}

  // kInvalid when the name is taken.
  Result<AlertChannel> Create(const AlertChannel& channel);
  // Applies `edit` to the stored channel (locked for update) and saves it. kNotFound, kInvalid.
  Result<AlertChannel> Update(int id, const Edit& edit);
  // Deletes it and removes it from every job's and group's alert_channel_ids. kNotFound.
  Result<void> Delete(int id);
  std::optional<AlertChannel> Get(int id);
  // By name.
  std::vector<AlertChannel> List();
  // The newest `limit` alerts, of job `job_id` when given, of jobs of `group_ids` when given (nullopt = any,
  // including deleted jobs'), newest first.
  std::vector<AlertEntry> ListAlerts(std::optional<int> job_id,
                                     const std::optional<std::vector<int>>& group_ids, int limit);

 private:
  ringwheel::Clock& clock_;
  PgPool& pool_;
};

}  // namespace cronwheel::admin

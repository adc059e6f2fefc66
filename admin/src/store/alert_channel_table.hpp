#pragma once
// What other tables' owners ask of alert_channel, and the statements on alert_state and alert_log
// (store/alert_channel_table.cpp; the REST API's writes of alert_channel are
// store/pg_alert_channel_store.cpp's). Private to admin/src/store.

#include <pqxx/pqxx>
#include <span>
#include <string>
#include <vector>

#include "admin/model/alert_channel.hpp"
#include "admin/results/result_store.hpp"

namespace cronwheel::admin::alert_channel_table {

// The channels as JSON (an array of objects with every column) -> values. For the alarm's claim, which
// reads them in its own statement.
std::vector<AlertChannel> FromJson(const std::string& json_text);

// ResultStore::PlanAlerts, FinishAlerts and ClaimAlertRetries (admin/results/result_store.hpp) in `tx`.
std::vector<AlertPlan> PlanAlerts(pqxx::transaction_base& tx, const FailedFire& fire, std::string_view event,
                                  const nlohmann::json& alarm, std::int64_t now_ms);
void FinishAlerts(pqxx::transaction_base& tx, std::span<const AlertDelivery> deliveries, std::int64_t now_ms);
std::vector<PendingAlert> ClaimAlertRetries(pqxx::transaction_base& tx, std::int64_t now_ms, int limit);
std::vector<PendingAlert> ClaimRecoveries(pqxx::transaction_base& tx, std::int64_t now_ms, int limit);

// Retention (results/report_monitor.hpp): deletes at most `limit` alert_log rows created before `before_ms`
// whose delivery has ended (not SENDING or RETRYING), oldest first. Returns how many.
std::int64_t DeleteEndedAlerts(pqxx::transaction_base& tx, std::int64_t before_ms, int limit);

// The SQL expression of the channels of `ids_expr` (an int[] expression) as a JSON array, for a SELECT
// list.
std::string JsonOf(const std::string& ids_expr);

}  // namespace cronwheel::admin::alert_channel_table

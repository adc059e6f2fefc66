// Workflows' graph checks and readiness rules as pure functions of a run's node states
// (admin/model/workflow.hpp).
#include "admin/model/workflow.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using cronwheel::admin::Advance;
using cronwheel::admin::CheckGraph;
using cronwheel::admin::EdgeCondition;
using cronwheel::admin::GraphFromJson;
using cronwheel::admin::NodeState;
using cronwheel::admin::RunState;
using cronwheel::admin::WithDescendants;
using cronwheel::admin::WorkflowEdge;
using cronwheel::admin::WorkflowGraph;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr auto kS = EdgeCondition::kSuccess;
constexpr auto kF = EdgeCondition::kFailure;
constexpr auto kA = EdgeCondition::kAlways;

WorkflowGraph Graph(std::vector<std::string> keys, std::vector<WorkflowEdge> edges) {
  WorkflowGraph g;
  int job = 1;
  for (auto& k : keys)
    g.nodes.push_back({.key = std::move(k), .job_id = job++});
  g.edges = std::move(edges);
  return g;
}

// a -> b, a -> c, b -> d, c -> d
WorkflowGraph Diamond() {
  return Graph({"a", "b", "c", "d"}, {{"a", "b", kS}, {"a", "c", kS}, {"b", "d", kS}, {"c", "d", kS}});
}

TEST(Workflow, ARunStartsWithItsRootsAndANodeWaitsForAllItsParents) {
  const auto g = Diamond();
  auto p = Advance(g, {});
  EXPECT_THAT(p.start, ElementsAre("a"));
  EXPECT_THAT(p.skip, IsEmpty());
  EXPECT_FALSE(p.ended);
  p = Advance(g, {{"a", NodeState::kSuccess}});
  EXPECT_THAT(p.start, ElementsAre("b", "c"));
  // Fan-in: d waits while c runs.
  p = Advance(g, {{"a", NodeState::kSuccess}, {"b", NodeState::kSuccess}, {"c", NodeState::kRunning}});
  EXPECT_THAT(p.start, IsEmpty());
  EXPECT_FALSE(p.ended);
  p = Advance(g, {{"a", NodeState::kSuccess}, {"b", NodeState::kSuccess}, {"c", NodeState::kSuccess}});
  EXPECT_THAT(p.start, ElementsAre("d"));
  p = Advance(g, {{"a", NodeState::kSuccess},
                  {"b", NodeState::kSuccess},
                  {"c", NodeState::kSuccess},
                  {"d", NodeState::kSuccess}});
  EXPECT_THAT(p.start, IsEmpty());
  EXPECT_EQ(p.ended, RunState::kSuccess);
}

TEST(Workflow, AFailedParentSkipsASuccessChildAtOnceAndTheSkipCascades) {
  const auto g = Diamond();
  // b failed while c still runs: d can no longer run, it is skipped without waiting for c.
  auto p = Advance(g, {{"a", NodeState::kSuccess}, {"b", NodeState::kFailed}, {"c", NodeState::kRunning}});
  EXPECT_THAT(p.skip, ElementsAre("d"));
  EXPECT_FALSE(p.ended);
  // A chain: a fails, b, c and d are skipped, the run fails (nothing handles a's failure).
  p = Advance(g, {{"a", NodeState::kFailed}});
  EXPECT_THAT(p.skip, ElementsAre("b", "c", "d"));
  EXPECT_THAT(p.start, IsEmpty());
  EXPECT_EQ(p.ended, RunState::kFailed);
}

TEST(Workflow, FailureAndAlwaysEdgesHandleAFailureAndAnAlwaysEdgeRunsAfterASkip) {
  // a -> ok (SUCCESS), a -> cleanup (FAILURE), ok -> report (ALWAYS), cleanup -> report (ALWAYS)
  const auto g =
      Graph({"a", "ok", "cleanup", "report"},
            {{"a", "ok", kS}, {"a", "cleanup", kF}, {"ok", "report", kA}, {"cleanup", "report", kA}});
  auto p = Advance(g, {{"a", NodeState::kSuccess}});
  EXPECT_THAT(p.start, ElementsAre("ok"));
  EXPECT_THAT(p.skip, ElementsAre("cleanup"));
  p = Advance(g, {{"a", NodeState::kSuccess}, {"ok", NodeState::kSuccess}, {"cleanup", NodeState::kSkipped}});
  EXPECT_THAT(p.start, ElementsAre("report"));
  // a fails: cleanup runs, ok is skipped, report still runs after both (ALWAYS holds for a skip).
  p = Advance(g, {{"a", NodeState::kFailed}});
  EXPECT_THAT(p.start, ElementsAre("cleanup"));
  EXPECT_THAT(p.skip, ElementsAre("ok"));
  p = Advance(g, {{"a", NodeState::kFailed},
                  {"ok", NodeState::kSkipped},
                  {"cleanup", NodeState::kSuccess},
                  {"report", NodeState::kSuccess}});
  // a's failure had a FAILURE edge: it was handled, the run succeeds.
  EXPECT_EQ(p.ended, RunState::kSuccess);
  // A killed node counts as failed for its edges.
  p = Advance(g, {{"a", NodeState::kKilled}});
  EXPECT_THAT(p.start, ElementsAre("cleanup"));
}

TEST(Workflow, AFailedLeafFailsTheRunAndRerunResetsANodeAndWhatFollowsIt) {
  const auto g = Diamond();
  auto p = Advance(g, {{"a", NodeState::kSuccess},
                       {"b", NodeState::kSuccess},
                       {"c", NodeState::kSuccess},
                       {"d", NodeState::kFailed}});
  EXPECT_EQ(p.ended, RunState::kFailed);
  EXPECT_THAT(WithDescendants(g, "b"), ElementsAre("b", "d"));
  EXPECT_THAT(WithDescendants(g, "a"), ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(WithDescendants(g, "zz"), IsEmpty());
  // Re-running b after it failed: b and d are WAITING again, b's parent a succeeded, so b starts.
  p = Advance(g, {{"a", NodeState::kSuccess}, {"b", NodeState::kWaiting}, {"c", NodeState::kSuccess}});
  EXPECT_THAT(p.start, ElementsAre("b"));
  EXPECT_THAT(p.skip, IsEmpty());
}

TEST(Workflow, CyclesUnknownKeysAndBadShapesAreRefusedNamingTheField) {
  auto r = CheckGraph(Graph({"a", "b", "c"}, {{"a", "b", kS}, {"b", "c", kS}, {"c", "b", kS}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "edges");
  EXPECT_EQ(r.error().fields.at(0).code, "cycle");
  EXPECT_THAT(r.error().message, HasSubstr("b -> c -> b"));
  r = CheckGraph(Graph({"a", "b"}, {{"a", "x", kS}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "edges[0].to");
  r = CheckGraph(Graph({"a", "a"}, {}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "nodes[1].key");
  r = CheckGraph(Graph({"a"}, {{"a", "a", kS}}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).code, "cycle");
  r = CheckGraph(Graph({"a b"}, {}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().fields.at(0).field, "nodes[0].key");
  EXPECT_FALSE(CheckGraph(Graph({}, {})).ok());
  EXPECT_TRUE(CheckGraph(Diamond()).ok());

  auto g = GraphFromJson(json::parse(R"([{"key": "a", "job_id": 3}, {"key": "b", "job_id": "x"}])"),
                         json::parse(R"([{"from": "a", "to": "b", "condition": "SOMETIMES"}])"));
  ASSERT_FALSE(g.ok());
  ASSERT_EQ(g.error().fields.size(), 2u);
  EXPECT_EQ(g.error().fields[0].field, "nodes[1].job_id");
  EXPECT_EQ(g.error().fields[1].field, "edges[0].condition");
  EXPECT_THAT(g.error().fields[1].message, HasSubstr("\"SOMETIMES\""));
  g = GraphFromJson(json::parse(R"([{"key": "a", "job_id": 3, "param": "--x"}, {"key": "b", "job_id": 4}])"),
                    json::parse(R"([{"from": "a", "to": "b", "condition": "ALWAYS"}])"));
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->nodes[0].param, "--x");
  EXPECT_EQ(g->edges[0].condition, kA);
  EXPECT_EQ(cronwheel::admin::ToJson(*g)["edges"][0]["condition"], "ALWAYS");
}

TEST(Workflow, AHundredNodeGraphFansOutAndInInOneStep) {
  // 100 nodes: root fans out to 98 nodes, which all fan in to sink.
  std::vector<std::string> keys{"root"};
  std::vector<WorkflowEdge> edges;
  for (int i = 0; i < 98; ++i) {
    keys.push_back("n" + std::to_string(i));
    edges.push_back({"root", keys.back(), kS});
    edges.push_back({keys.back(), "sink", kS});
  }
  keys.emplace_back("sink");
  const auto g = Graph(keys, edges);
  ASSERT_TRUE(CheckGraph(g).ok());
  std::map<std::string, NodeState> s{{"root", NodeState::kSuccess}};
  EXPECT_EQ(Advance(g, s).start.size(), 98u);
  for (int i = 0; i < 98; ++i)
    s["n" + std::to_string(i)] = NodeState::kSuccess;
  EXPECT_THAT(Advance(g, s).start, ElementsAre("sink"));
}

}  // namespace

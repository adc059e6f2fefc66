#pragma once
// An ExecutorClient that sends nothing and answers every call with success (code 200): the base of the
// tests' scripted executors, which override only the calls they script or record.
//
// Thread-safety: stateless; a derived class guards what it adds.

#include <string>

#include "admin/dispatch/executor_client.hpp"

namespace cwtest {

class AnsweringExecutorClient : public cronwheel::admin::ExecutorClient {
 public:
  RunReply Run(const std::string&, const std::string&, const cronwheel::xxljob::TriggerParam&) override {
    return {cronwheel::xxljob::Envelope::Success()};
  }
  cronwheel::xxljob::Envelope Beat(const std::string&, const std::string&) override { return Ok(); }
  cronwheel::xxljob::Envelope IdleBeat(const std::string&, const std::string&, int) override { return Ok(); }
  cronwheel::xxljob::Envelope Kill(const std::string&, const std::string&, int) override { return Ok(); }
  cronwheel::xxljob::Envelope Drain(const std::string&, const std::string&) override { return Ok(); }
  cronwheel::xxljob::Envelope Cancel(const std::string&, const std::string&,
                                     const cronwheel::xxljob::CancelParam&) override {
    return Ok();
  }
  cronwheel::xxljob::Envelope Log(const std::string&, const std::string&,
                                  const cronwheel::xxljob::LogParam&) override {
    return Ok();
  }

 private:
  static cronwheel::xxljob::Envelope Ok() { return cronwheel::xxljob::Envelope::Success(); }
};

}  // namespace cwtest

// nccom-plugin-check over the third-party plugin: it reads the layout from
// NCCOM_NET_PLUGIN_LAYOUT as the host does; it survives and reports what real
// plugins do (connect/accept that block, test only in posting order) in
// every layout; the v4 build (blocking connect/accept by contract) conforms.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-plugin-check";
const std::string kNvidia = std::string(TPN_PLUGIN_DIR) + "/libtpn-nvidia_v6.so";

std::string output(const nccom_test::ChildResult& r) { return r.out + r.err; }

TEST(ThirdPartyNetPluginCheck, TheLayoutComesFromTheEnvironmentAsInTheHost) {
  const auto nvidia = nccom_test::run_child(kTool, {"--only", "init", kNvidia},
                                            {{"NCCOM_NET_PLUGIN_LAYOUT", "nvidia"}});
  EXPECT_EQ(nvidia.exit_code, 0) << output(nvidia);
  EXPECT_NE(nvidia.out.find("as an NVIDIA ncclNet_v6 table (136 bytes, as expected)"),
            std::string::npos)
      << output(nvidia);
  EXPECT_NE(nvidia.out.find("nvidia layout"), std::string::npos) << output(nvidia);

  // Upper case, as the host's knob takes it; --layout still overrides.
  const auto upper = nccom_test::run_child(kTool, {"--only", "init", kNvidia},
                                           {{"NCCOM_NET_PLUGIN_LAYOUT", "NVIDIA"}});
  EXPECT_EQ(upper.exit_code, 0) << output(upper);
  const auto overridden =
      nccom_test::run_child(kTool, {"--layout", "neuron", "--only", "init", kNvidia},
                            {{"NCCOM_NET_PLUGIN_LAYOUT", "nvidia"}});
  EXPECT_EQ(overridden.exit_code, 1)
      << output(overridden);  // an NVIDIA table read as Neuron is refused

  const auto bogus = nccom_test::run_child(kTool, {"--only", "init", kNvidia},
                                           {{"NCCOM_NET_PLUGIN_LAYOUT", "amd"}});
  EXPECT_EQ(bogus.exit_code, 2) << output(bogus);
  EXPECT_NE(output(bogus).find("NCCOM_NET_PLUGIN_LAYOUT is \"amd\"; it is neuron or nvidia"),
            std::string::npos)
      << output(bogus);
}

TEST(ThirdPartyNetPluginCheck, TheV4BuildConforms) {
  const auto r = nccom_test::run_child(
      kTool, {"--timeout", "20", std::string(TPN_PLUGIN_DIR) + "/libtpn-neuron_v4.so"}, {});
  EXPECT_EQ(r.exit_code, 0) << output(r);
  EXPECT_NE(r.out.find("0 failed"), std::string::npos) << output(r);
  // Its connect and accept block (the v4 contract): observed, and not a failure.
  EXPECT_NE(r.out.find("accept blocks until a peer connects (nccom copes"), std::string::npos)
      << output(r);
}

struct Build {
  const char* name;
  const char* file;
  bool nvidia;
};
const Build kBuilds[] = {{"NeuronV4", "libtpn-neuron_v4.so", false},
                         {"NeuronV5", "libtpn-neuron_v5.so", false},
                         {"NeuronV6", "libtpn-neuron_v6.so", false},
                         {"NvidiaV6", "libtpn-nvidia_v6.so", true}};

void PrintTo(const Build& b, std::ostream* os) { *os << b.name; }

class ThirdPartyNetPluginCheckBehaviours : public testing::TestWithParam<Build> {
 protected:
  // nccom-plugin-check ARGS... on this build with TPN_BEHAVIOUR=behaviour.
  nccom_test::ChildResult check(const std::string& behaviour, std::vector<std::string> args) const {
    std::map<std::string, std::string> env = {{"TPN_BEHAVIOUR", behaviour}};
    if (GetParam().nvidia) env["NCCOM_NET_PLUGIN_LAYOUT"] = "nvidia";
    args.push_back(std::string(TPN_PLUGIN_DIR) + "/" + GetParam().file);
    return nccom_test::run_child(kTool, args, env);
  }
};

// Every connect and accept of a plugin that blocks until the other side
// comes is observed and reported, never a hang; with test allowed only in
// posting order, 512 messages with up to 160 outstanding still pass.
TEST_P(ThirdPartyNetPluginCheckBehaviours, BlockingCallsAndPostingOrderAreSurvived) {
  for (const char* name : {"accept-then-connect", "many-outstanding", "sizes"}) {
    const std::string check = name;
    const auto r = this->check("block_accept,block_connect,in_order_test",
                               {"--timeout", "20", "--only", check});
    EXPECT_EQ(r.exit_code, 0) << check << ":\n" << output(r);
    EXPECT_NE(r.out.find("0 failed"), std::string::npos) << check << ":\n" << output(r);
    const char* observed = check == "accept-then-connect"
                               ? "accept blocks until a peer connects (nccom copes"
                               : "connect blocks until the peer accepts (nccom copes";
    EXPECT_NE(r.out.find(observed), std::string::npos) << check << ":\n" << output(r);
  }
}

// Requests that complete out of posting order (a later one done first) are
// survived: tested oldest first, each is retried until it is done.
TEST_P(ThirdPartyNetPluginCheckBehaviours, OutOfOrderCompletionIsSurvived) {
  for (const char* name : {"sizes", "many-outstanding", "larger-recv-buffer"}) {
    const std::string check = name;
    const auto r = this->check("out_of_order", {"--timeout", "20", "--only", check});
    EXPECT_EQ(r.exit_code, 0) << check << ":\n" << output(r);
    EXPECT_NE(r.out.find("0 failed"), std::string::npos) << check << ":\n" << output(r);
  }
}

// A plugin that never reports a request done fails the data check within
// --timeout, naming the request and how long it was tested; no hang, and
// the next check still runs.
TEST_P(ThirdPartyNetPluginCheckBehaviours, ARequestThatNeverCompletesFailsWithinTheBound) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = check("never_complete", {"--timeout", "2", "--only", "sizes,null-args"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 1) << output(r);
  EXPECT_NE(r.out.find("timed out waiting for 6 of 6 sends to complete (oldest: send #0 (0 bytes"),
            std::string::npos)
      << output(r);
  EXPECT_NE(r.out.find(" ms ago and tested "), std::string::npos) << output(r);
  EXPECT_NE(r.out.find(" times, never done; "), std::string::npos) << output(r);
  EXPECT_NE(r.out.find("\nnull-args            PASS"), std::string::npos) << "the next check ran:\n"
                                                                          << output(r);
  EXPECT_LT(s, 15.0) << "the bound is 2 s per wait";
}

// Received sizes left unwritten are the right of a plugin built against
// NVIDIA's headers (NCCL read them only to size a GPU flush), not of one
// built against the Neuron headers: the same plugin passes or fails the data
// check by its layout.
TEST_P(ThirdPartyNetPluginCheckBehaviours, UnwrittenReceivedSizesAreJudgedByTheLayout) {
  // A failed receive leaves the sender waiting out --timeout: a short one.
  const auto r =
      check("sizes_unset", {"--timeout", GetParam().nvidia ? "20" : "3", "--only", "sizes"});
  if (GetParam().nvidia) {
    EXPECT_EQ(r.exit_code, 0) << output(r);
    EXPECT_NE(r.out.find("0 failed"), std::string::npos) << output(r);
  } else {
    EXPECT_EQ(r.exit_code, 1) << output(r);
    EXPECT_NE(r.out.find("left the received size unwritten; a plugin of the Neuron layouts must "
                         "report it"),
              std::string::npos)
        << output(r);
  }
}

// A pool of 8 requests whose 9th post fails: what NVIDIA's headers allow
// (nccom keeps such a plugin within 8 per comm), not what the Neuron headers
// allow (128, and a NULL request when full).
TEST_P(ThirdPartyNetPluginCheckBehaviours, APoolOfEightThatFailsWhenFullIsJudgedByTheLayout) {
  const auto r = check("full_is_error", {"--timeout", "20", "--only", "many-outstanding"});
  if (GetParam().nvidia) {
    EXPECT_EQ(r.exit_code, 0) << output(r);
    EXPECT_NE(r.out.find("0 failed"), std::string::npos) << output(r);
  } else {
    EXPECT_EQ(r.exit_code, 1) << output(r);
    EXPECT_NE(output(r).find("TPN: no free request: 8 requests in flight on this comm"),
              std::string::npos)
        << output(r);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ThirdPartyNetPluginCheckBehaviours, testing::ValuesIn(kBuilds),
                         [](const testing::TestParamInfo<Build>& i) {
                           return std::string(i.param.name);
                         });

}  // namespace

// NetOfiInit: the exported tables, init without an eligible provider (what
// every host without EFA sees), configuration, and calls outside init/fini.
// NetOfiTcpIface: FI_TCP_IFACE naming an interface, none, or a list.
#include "machine_fabric.h"
#include "net_config_call.h"
#include "net_ofi_fixture.h"

#include <rdma/fabric.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace net_ofi_test {
namespace {

TEST(NetOfiInit, TablesAreExportedWithTheSpecName) {
  const PluginTables& t = plugin();
  ASSERT_NE(t.v6, nullptr);
  ASSERT_NE(t.v5, nullptr);
  ASSERT_NE(t.v4, nullptr);
  ASSERT_NE(t.configure, nullptr);
  EXPECT_STREQ(t.v6->name, "AWS Libfabric");
  EXPECT_STREQ(t.v5->name, "AWS Libfabric");
  EXPECT_STREQ(t.v4->name, "AWS Libfabric");
  // All 22 v6 slots are filled (the host never null-checks them).
  const void* const* slots = reinterpret_cast<const void* const*>(t.v6);
  for (size_t i = 0; i < sizeof(ncclNet_v6_t) / sizeof(void*); ++i) {
    EXPECT_NE(slots[i], nullptr) << "v6 slot " << i;
  }
  slots = reinterpret_cast<const void* const*>(t.v5);
  for (size_t i = 0; i < sizeof(ncclNet_v5_t) / sizeof(void*); ++i) {
    EXPECT_NE(slots[i], nullptr) << "v5 slot " << i;
  }
  slots = reinterpret_cast<const void* const*>(t.v4);
  for (size_t i = 0; i < sizeof(ncclNet_v4_t) / sizeof(void*); ++i) {
    EXPECT_NE(slots[i], nullptr) << "v4 slot " << i;
  }
  // Shared slots point at the same implementations.
  EXPECT_EQ(t.v5->isend, t.v6->isend);
  EXPECT_EQ(t.v4->regMr, t.v6->regMr);
}

void expect_clean_failure(const char* provider_env) {
  const ncclNet_v6_t* net = plugin().v6;
  ASSERT_NE(net, nullptr);
  if (provider_env != nullptr) {
    setenv("FI_PROVIDER", provider_env, 1);
  } else {
    unsetenv("FI_PROVIDER");
  }
  clear_logs();
  const int fds = open_fd_count();
  const int threads = thread_count();
  EXPECT_EQ(net->init(capture_logger), ncclInternalError);
  EXPECT_TRUE(logs_contain("NET/OFI Using Libfabric version")) << captured_logs();
  EXPECT_TRUE(logs_contain("No eligible providers")) << captured_logs();
  int ndev = -1;
  EXPECT_EQ(net->devices(&ndev), ncclInternalError);
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* comm = nullptr;
  EXPECT_EQ(net->listen(0, handle, &comm), ncclInternalError);
  // A second attempt fails the same way (the host may retry).
  EXPECT_EQ(net->init(capture_logger), ncclInternalError);
  EXPECT_EQ(net->fini(), ncclSuccess);
  EXPECT_EQ(open_fd_count(), fds);
  EXPECT_EQ(thread_count(), threads);
}

// Production default: no FI_PROVIDER → efa only; there is no EFA here.
TEST(NetOfiInit, WithoutFiProviderOnlyEfaIsEligibleAndInitFailsCleanly) {
  expect_clean_failure(nullptr);
  EXPECT_TRUE(logs_contain("Setting provider_filter to efa")) << captured_logs();
}

// Finding no efa provider under the default filter is a WARN where EFA is
// present (net.efa = yes, as the host hands it over) and an expected INFO
// where it is absent.
TEST(NetOfiInit, NoEfaProviderIsAWarnOnlyWhereEfaIsPresent) {
  unsetenv("FI_PROVIDER");
  const ncclNet_v6_t* net = plugin().v6;
  ASSERT_NE(net, nullptr);
  const nccom_test::NetConfigCall configure(plugin().library);
  ASSERT_TRUE(configure.valid());

  ASSERT_EQ(configure({{"net.efa", "yes"}}), ncclSuccess) << configure.why();
  clear_logs();
  EXPECT_EQ(net->init(capture_logger), ncclInternalError);
  EXPECT_TRUE(
      logs_contain("WARN NET/OFI No eligible providers were found (provider efa, "
                   "FI_EP_RDM, tagged messages): "))
      << captured_logs();

  ASSERT_EQ(configure({{"net.efa", "no"}}), ncclSuccess) << configure.why();
  clear_logs();
  EXPECT_EQ(net->init(capture_logger), ncclInternalError);
  EXPECT_TRUE(
      logs_contain("INFO NET/OFI No eligible providers were found (provider efa, "
                   "FI_EP_RDM, tagged messages): "))
      << captured_logs();
  EXPECT_TRUE(logs_contain("; expected here: net.efa is no, this host has no EFA device"))
      << captured_logs();
  EXPECT_FALSE(logs_contain("WARN ")) << captured_logs();
  EXPECT_EQ(net->fini(), ncclSuccess);
  ASSERT_EQ(configure({}), ncclSuccess);  // back to auto
}

// FI_PROVIDER names a provider someone asked for: not finding it is a WARN
// even where EFA is absent.
TEST(NetOfiInit, ExplicitEfaFailsCleanly) {
  const nccom_test::NetConfigCall configure(plugin().library);
  ASSERT_TRUE(configure.valid());
  ASSERT_EQ(configure({{"net.efa", "no"}}), ncclSuccess) << configure.why();
  expect_clean_failure("efa");
  EXPECT_TRUE(
      logs_contain("WARN NET/OFI No eligible providers were found (provider from "
                   "FI_PROVIDER"))
      << captured_logs();
  ASSERT_EQ(configure({}), ncclSuccess);
}

TEST(NetOfiInit, CallsBeforeInitAreErrorsNotCrashes) {
  const ncclNet_v6_t* net = plugin().v6;
  ASSERT_NE(net, nullptr);
  int ndev = 0;
  ncclNetProperties_v6_t props{};
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* comm = nullptr;
  int done = 0;
  EXPECT_EQ(net->devices(&ndev), ncclInternalError);
  EXPECT_EQ(net->getProperties(0, &props), ncclInternalError);
  EXPECT_EQ(net->listen(0, handle, &comm), ncclInternalError);
  EXPECT_EQ(net->test(handle, &done, nullptr), ncclInvalidArgument);
  EXPECT_EQ(net->closeSend(handle), ncclInvalidArgument);
  EXPECT_EQ(net->fini(), ncclSuccess);  // fini without init is harmless
}

TEST(NetOfiInit, RailsGroupNicsIntoDevices) {
  const PluginTables& t = plugin();
  ASSERT_NE(t.configure, nullptr);
  EXPECT_EQ(t.configure(0), ncclInvalidArgument);
  EXPECT_EQ(t.configure(65), ncclInvalidArgument);
  setenv("FI_PROVIDER", "tcp;ofi_rxm", 1);
  ASSERT_EQ(t.configure(1), ncclSuccess);
  ASSERT_EQ(t.v6->init(capture_logger), ncclSuccess) << captured_logs();
  EXPECT_EQ(t.v6->init(capture_logger), ncclSuccess);  // idempotent
  int nics = 0;
  ASSERT_EQ(t.v6->devices(&nics), ncclSuccess);
  ncclNetProperties_v6_t one{};
  ASSERT_EQ(t.v6->getProperties(0, &one), ncclSuccess);
  const std::string first_name = one.name;  // property strings live until fini
  ASSERT_EQ(t.v6->fini(), ncclSuccess);

  ASSERT_EQ(t.configure(64), ncclSuccess);
  ASSERT_EQ(t.v6->init(capture_logger), ncclSuccess) << captured_logs();
  int grouped = 0;
  ASSERT_EQ(t.v6->devices(&grouped), ncclSuccess);
  EXPECT_EQ(grouped, 1) << "all " << nics << " NICs in one device";
  ncclNetProperties_v6_t all{};
  ASSERT_EQ(t.v6->getProperties(0, &all), ncclSuccess);
  EXPECT_GE(all.speed, one.speed);
  EXPECT_EQ(all.name, first_name);
  // A comm still works on a grouped device (it uses one rail).
  char handle[NCCL_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  EXPECT_EQ(t.v6->listen(0, handle, &listen), ncclSuccess);
  EXPECT_EQ(t.v6->closeListen(listen), ncclSuccess);
  ASSERT_EQ(t.v6->fini(), ncclSuccess);
  EXPECT_EQ(t.configure(1), ncclSuccess);
}

// FI_TCP_IFACE over the tcp provider (ofi_rxm over tcp). libfabric drops
// a name no interface has and uses every interface instead, which it tells
// only its own info log: the plugin's init says so in one WARN, naming the
// variable, its value, the interfaces that are up and the ones it uses.
class NetOfiTcpIface : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string lack =
            nccom_test::machine::libfabric_provider("tcp;ofi_rxm", FI_MSG | FI_TAGGED);
        !lack.empty())
      NCCOM_SKIP_MACHINE_LACKS(kLibfabricProvider) << lack;
    setenv("FI_PROVIDER", "tcp;ofi_rxm", 1);
    clear_logs();
  }
  void TearDown() override {
    if (initialized_) {
      EXPECT_EQ(plugin().v6->fini(), ncclSuccess);
    }
    unsetenv("FI_TCP_IFACE");
  }
  // init's result; the WARNs that mention FI_TCP_IFACE land in `warns`.
  ncclResult_t init(std::vector<std::string>* warns) {
    const ncclResult_t rc = plugin().v6->init(capture_logger);
    initialized_ = rc == ncclSuccess;
    std::istringstream lines(captured_logs());
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("WARN ", 0) == 0 && line.find("FI_TCP_IFACE") != std::string::npos)
        warns->push_back(line);
    }
    return rc;
  }
  bool initialized_ = false;
};

TEST_F(NetOfiTcpIface, ANameNoInterfaceHasIsWarnedWithTheInterfacesThatExist) {
  setenv("FI_TCP_IFACE", "nccomnoif0", 1);
  std::vector<std::string> warns;
  ASSERT_EQ(init(&warns), ncclSuccess) << "libfabric falls back to every interface\n"
                                       << captured_logs();
  ASSERT_EQ(warns.size(), 1u) << captured_logs();
  const std::string& w = warns[0];
  EXPECT_EQ(w.rfind("WARN NET/OFI FI_TCP_IFACE=\"nccomnoif0\" names no network interface of this "
                    "host; the interfaces up here are ",
                    0),
            0u)
      << w;
  // Loopback is up on every machine, and libfabric's tcp provider always
  // offers it.
  const size_t up = w.find("the interfaces up here are ");
  const size_t uses = w.find("this process uses ");
  ASSERT_NE(uses, std::string::npos) << w;
  EXPECT_NE(w.substr(up, uses - up).find("lo"), std::string::npos) << w;
  EXPECT_NE(w.find("libfabric's tcp provider ignores a name it cannot find and uses every "
                   "interface instead: this process uses "),
            std::string::npos)
      << w;
  EXPECT_NE(w.find("lo", uses), std::string::npos) << w;
  EXPECT_NE(w.find(". Set FI_TCP_IFACE to one of the interfaces up here, or unset it"),
            std::string::npos)
      << w;
  EXPECT_EQ(w.find("not a list"), std::string::npos) << w;
}

// libfabric reads no list there: "lo,<name>" is one name it cannot find.
TEST_F(NetOfiTcpIface, AListIsOneNameToLibfabricAndIsWarnedAsSuch) {
  setenv("FI_TCP_IFACE", "lo,nccomnoif0", 1);
  std::vector<std::string> warns;
  ASSERT_EQ(init(&warns), ncclSuccess) << captured_logs();
  ASSERT_EQ(warns.size(), 1u) << captured_logs();
  EXPECT_NE(warns[0].find("FI_TCP_IFACE=\"lo,nccomnoif0\" names no network interface of this host "
                          "(libfabric takes one interface name there, not a list: it reads "
                          "\"lo,nccomnoif0\" as one name); the interfaces up here are "),
            std::string::npos)
      << warns[0];
}

// An interface that exists: no word, and libfabric keeps to it.
TEST_F(NetOfiTcpIface, AnInterfaceThatExistsIsUsedWithoutAWord) {
  setenv("FI_TCP_IFACE", "lo", 1);
  std::vector<std::string> warns;
  ASSERT_EQ(init(&warns), ncclSuccess) << captured_logs();
  EXPECT_TRUE(warns.empty()) << captured_logs();
  int ndev = 0;
  ASSERT_EQ(plugin().v6->devices(&ndev), ncclSuccess);
  ASSERT_GE(ndev, 1);
  for (int d = 0; d < ndev; ++d) {
    ncclNetProperties_v6_t props{};
    ASSERT_EQ(plugin().v6->getProperties(d, &props), ncclSuccess);
    EXPECT_STREQ(props.name, "lo") << "device " << d;
  }
}

}  // namespace
}  // namespace net_ofi_test

// Binding: which table is chosen, and a distinct error for each way a file
// can fail to be a usable net plugin. Layouts never mix silently.
#include "build_paths.h"
#include "net_host_util.h"

#include <fstream>

namespace nccom::net::testing {
namespace {

using plugin::LoadErrorKind;

plugin::LoadError bind_error(const std::string& path, Layout layout = Layout::kNeuron) {
  auto bound = open_and_bind(path, layout, {}, "test");
  EXPECT_FALSE(bound.ok()) << path << " bound as " << to_string(layout);
  return bound ? plugin::LoadError{} : bound.take_error();
}

TEST(NetHostBind, NewestTableWins) {
  auto all = open_and_bind(plugin_path("nethost-all"), Layout::kNeuron, {}, "test");
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ((*all)->info().version, 6);
  auto older = open_and_bind(plugin_path("nethost-v5-v4"), Layout::kNeuron, {}, "test");
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_EQ((*older)->info().version, 5);
}

TEST(NetHostBind, NvidiaTablesAreRefusedUnderTheNeuronLayout) {
  for (const char* stem : {"nethost-nvidia-v6", "nethost-nvidia-v5"}) {
    const auto error = bind_error(plugin_path(stem));
    EXPECT_EQ(error.kind, LoadErrorKind::AbiMismatch) << error.message;
    EXPECT_NE(error.message.find("net.plugin_layout = \"nvidia\""), std::string::npos)
        << error.message;
  }
  const auto v6 = bind_error(plugin_path("nethost-nvidia-v6"));
  EXPECT_NE(v6.message.find(plugin_path("nethost-nvidia-v6") +
                            ": ncclNetPlugin_v6 is 136 bytes, but a Neuron ncclNetPlugin_v6 "
                            "table is 176 bytes"),
            std::string::npos)
      << v6.message;
}

TEST(NetHostBind, NeuronTablesAreRefusedUnderTheNvidiaLayout) {
  const auto error = bind_error(plugin_path("nethost-neuron-v6"), Layout::kNvidia);
  EXPECT_EQ(error.kind, LoadErrorKind::AbiMismatch);
  EXPECT_NE(error.message.find("net.plugin_layout = \"neuron\""), std::string::npos)
      << error.message;
}

// The one mix-up nothing can detect: the v4 tables have the same size in both
// families. Binding NVIDIA v4 as Neuron v4 is harmless for registrations
// below 2 GiB (regMr's int and size_t share a register).
TEST(NetHostBind, NvidiaV4BindsAsNeuronV4) {
  auto bound = open_and_bind(plugin_path("nethost-nvidia-v4"), Layout::kNeuron, {}, "test");
  ASSERT_TRUE(bound) << bound.error().message;
  EXPECT_EQ((*bound)->info().version, 4);
  ASSERT_EQ((*bound)->init(nullptr), ncclSuccess);
  Endpoints e;
  ASSERT_TRUE(connect_endpoints(**bound, &e));
  EXPECT_TRUE(exchange(**bound, e, 4096));
  close_endpoints(**bound, e);
}

TEST(NetHostBind, NullMandatorySlotIsNamed) {
  const auto error = bind_error(plugin_path("nethost-null-slot"));
  EXPECT_EQ(error.kind, LoadErrorKind::NullSlot);
  EXPECT_EQ(
      error.message.rfind(
          plugin_path("nethost-null-slot") + ": ncclNetPlugin_v6 has NULL mandatory slot irecv", 0),
      0u)
      << error.message;
}

TEST(NetHostBind, NullNameIsRefused) {
  const auto error = bind_error(plugin_path("nethost-null-name"));
  EXPECT_EQ(error.kind, LoadErrorKind::NullSlot);
  EXPECT_NE(error.message.find("has a NULL name"), std::string::npos) << error.message;
}

TEST(NetHostBind, SlotPointingNowhereIsRefused) {
  const auto error = bind_error(plugin_path("nethost-garbage-slot"));
  EXPECT_EQ(error.kind, LoadErrorKind::BadDescriptor);
  EXPECT_NE(error.message.find("slot getMrKey points into no loaded object"), std::string::npos)
      << error.message;
}

// A v4-shaped table exported as ncclNetPlugin_v6: its recorded size gives it
// away before any slot is read.
TEST(NetHostBind, WrongStructUnderTheV6NameIsRefused) {
  const auto error = bind_error(plugin_path("nethost-wrong-struct"));
  EXPECT_EQ(error.kind, LoadErrorKind::AbiMismatch);
  EXPECT_NE(error.message.find("is 128 bytes"), std::string::npos) << error.message;
  EXPECT_NE(error.message.find("built against another header"), std::string::npos) << error.message;
}

TEST(NetHostBind, LibraryWithoutTableIsNotANetPlugin) {
  const auto error = bind_error(plugin_path("nethost-no-table"));
  EXPECT_EQ(error.kind, LoadErrorKind::MissingSymbol);
  EXPECT_EQ(error.message.rfind("Failed to find ncclNetPlugin_v6 symbol.", 0), 0u) << error.message;
}

TEST(NetHostBind, MissingAndUnloadableFilesAreTheirOwnErrors) {
  const auto missing = bind_error(plugin_path("nethost-does-not-exist"));
  EXPECT_EQ(missing.kind, LoadErrorKind::NotFound) << missing.message;

  auto by_name = open_and_bind("nosuch", Layout::kNeuron, {NET_HOST_NAMED_DIR}, "test");
  ASSERT_FALSE(by_name);
  EXPECT_EQ(by_name.error().kind, LoadErrorKind::NotFound);
  EXPECT_NE(
      by_name.error().message.find(std::string(NET_HOST_NAMED_DIR) + "/libnccom-net-nosuch.so, " +
                                   NET_HOST_NAMED_DIR + "/libnccom-nosuch.so"),
      std::string::npos)
      << by_name.error().message;

  LogCapture scratch;  // only for its directory
  const std::string garbage = scratch.dir() + "/libnccom-net-garbage.so";
  std::ofstream(garbage) << "not an ELF object, but long enough to have an ELF header's size\n";
  const auto refused = bind_error(garbage);
  EXPECT_EQ(refused.kind, LoadErrorKind::InvalidFile) << refused.message;
  EXPECT_NE(refused.message.find(garbage + ": not an ELF file"), std::string::npos)
      << refused.message;
  std::remove(garbage.c_str());
}

TEST(NetHostBind, BareNamesAreLookedUpInBothForms) {
  auto named = open_and_bind("lbnamed", Layout::kNeuron, {NET_HOST_NAMED_DIR}, "test");
  ASSERT_TRUE(named) << named.error().message;
  EXPECT_EQ((*named)->info().name, "lbnamed");
  auto short_name = open_and_bind("lbshort", Layout::kNeuron, {NET_HOST_NAMED_DIR}, "test");
  ASSERT_TRUE(short_name) << short_name.error().message;
  EXPECT_EQ((*short_name)->info().name, "lbshort");
  EXPECT_EQ((*short_name)->info().version, 5);
}

// Adapters are objects: two plugins of the same version work side by side.
TEST(NetHostBind, TwoPluginsOfOneVersionCoexist) {
  auto a = open_and_bind(plugin_path("nethost-neuron-v6"), Layout::kNeuron, {}, "a");
  auto b = open_and_bind("lbnamed", Layout::kNeuron, {NET_HOST_NAMED_DIR}, "b");
  ASSERT_TRUE(a && b);
  ASSERT_EQ((*a)->init(nullptr), ncclSuccess);
  ASSERT_EQ((*b)->init(nullptr), ncclSuccess);
  Endpoints ea, eb;
  ASSERT_TRUE(connect_endpoints(**a, &ea));
  ASSERT_TRUE(connect_endpoints(**b, &eb));
  EXPECT_TRUE(exchange(**a, ea, 100));
  EXPECT_TRUE(exchange(**b, eb, 200));
  close_endpoints(**a, ea);
  close_endpoints(**b, eb);
  EXPECT_NE((*a)->native_v6(), (*b)->native_v6());
}

// A borrowed handle (the runtime's) is never closed by the host.
TEST(NetHostBind, BorrowedHandleStaysOpen) {
  const std::string path = plugin_path("nethost-neuron-v6");
  const bool loaded_before = stats_of(path) != nullptr;  // by an earlier test in this process
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  {
    auto bound = bind_handle(handle, Layout::kNeuron, "the test's handle", "runtime handle");
    ASSERT_TRUE(bound) << bound.error().message;
    EXPECT_EQ((*bound)->info().origin, "runtime handle");
  }
  EXPECT_NE(stats_of(path), nullptr) << "still loaded after the Net is gone";
  dlclose(handle);
  if (!loaded_before) {
    EXPECT_EQ(stats_of(path), nullptr) << "our dlclose was the last reference";
  }
}

}  // namespace
}  // namespace nccom::net::testing

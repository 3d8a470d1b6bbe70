// The host's adapter over topology plugins: real shared objects, loaded by
// the plugin loader, each variant exercising one rule of the vtable or one
// way a call can fail.
#include "graphbuild/topo_backend.h"

#include "build_paths.h"
#include "plugin/plugin_loader.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace nccom::graphbuild {
namespace {

nccom_host_api_t host_api() {
  nccom_host_api_t h{};
  h.struct_size = sizeof h;
  h.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  return h;
}

std::unique_ptr<plugin::LoadedPlugin> load(const std::string& variant) {
  auto p = plugin::load_plugin("topo_" + variant, NCCOM_PLUGIN_KIND_TOPOLOGY, host_api(),
                               {GRAPHBUILD_PLUGIN_DIR});
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? std::move(*p) : nullptr;
}

int* symbol(plugin::LoadedPlugin& p, const char* name) {
  return static_cast<int*>(p.library().symbol(name));
}

nccom_topo_machine_t machine(const char* arch) {
  nccom_topo_machine_t m{};
  m.struct_size = sizeof m;
  std::strncpy(m.arch_name, arch, sizeof m.arch_name - 1);
  m.device_count = 4;
  m.vcore_size = 1;
  return m;
}

nccom_topo_node_t node(int n_local) {
  nccom_topo_node_t n{};
  n.struct_size = sizeof n;
  n.n_local = n_local;
  return n;
}

nccom_topo_graph_request_t ring_request() {
  nccom_topo_graph_request_t r{};
  r.struct_size = sizeof r;
  r.pattern = 4;
  r.cross_nic = 2;
  r.min_channels = 1;
  r.max_channels = 16;
  r.new_algorithm = -1;
  return r;
}

TEST(GraphbuildTopoBackend, TextsCrossTheBoundaryAndAreFreedByThePlugin) {
  auto p = load("default");
  ASSERT_NE(p, nullptr);
  auto b = TopoBackend::bind(*p);
  ASSERT_TRUE(b.ok()) << b.error().message;
  std::string why;
  EXPECT_TRUE(b->probe(machine("emu"), &why));
  EXPECT_FALSE(b->probe(machine("trn2"), &why));
  EXPECT_EQ(why, "arch trn2 is not emu");

  auto sys = b->system_xml(machine("emu"), node(8));
  ASSERT_TRUE(sys.ok()) << sys.error().message;
  EXPECT_EQ(*sys, "<system version=\"1\" nlocal=\"8\"/>");
  auto graph = b->graph_xml(machine("emu"), node(8), *sys, ring_request());
  ASSERT_TRUE(graph.ok()) << graph.error().message;
  ASSERT_TRUE(graph->has_value());
  EXPECT_EQ(**graph, "<graphs version=\"1\" from=\"<system version=\"1\" nlocal=\"8\"/>\"/>");
  int* freed = symbol(*p, "topo_test_free_calls");
  ASSERT_NE(freed, nullptr);
  EXPECT_EQ(*freed, 2);
  EXPECT_EQ(*symbol(*p, "topo_test_last_request_max_channels"), 16);
}

TEST(GraphbuildTopoBackend, AFailingCallNamesThePluginTheCallAndItsReason) {
  auto p = load("fails");
  ASSERT_NE(p, nullptr);
  auto b = TopoBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  auto sys = b->system_xml(machine("emu"), node(3));
  ASSERT_FALSE(sys.ok());
  const std::string& m = sys.error().message;
  EXPECT_NE(m.find("topology plugin topo_test ("), std::string::npos) << m;
  EXPECT_NE(m.find("libnccom-topo_fails.so"), std::string::npos) << m;
  EXPECT_NE(m.find("get_system_xml returned ERROR: device 3 has no PCI address"), std::string::npos)
      << m;
}

TEST(GraphbuildTopoBackend, OkWithoutATextIsAnError) {
  auto p = load("no_text");
  ASSERT_NE(p, nullptr);
  auto b = TopoBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  auto sys = b->system_xml(machine("emu"), node(1));
  ASSERT_FALSE(sys.ok());
  EXPECT_NE(sys.error().message.find("returned OK but no text"), std::string::npos);
}

TEST(GraphbuildTopoBackend, NoSearchIsNotAnError) {
  for (const char* variant : {"no_graph", "unsupported"}) {
    auto p = load(variant);
    ASSERT_NE(p, nullptr);
    auto b = TopoBackend::bind(*p);
    ASSERT_TRUE(b.ok()) << variant;
    auto graph = b->graph_xml(machine("emu"), node(2), "<system/>", ring_request());
    ASSERT_TRUE(graph.ok()) << variant;
    EXPECT_FALSE(graph->has_value()) << variant;
  }
}

// list_platforms and describe_node: texts freed by the plugin, failures
// named, and nothing at all from a NULL slot, an UNSUPPORTED answer or an
// ops struct whose size ends before the slots (set or not).
TEST(GraphbuildTopoBackend, PlatformSlotsAreOptionalAndReadOnlyWithinStructSize) {
  auto p = load("default");
  ASSERT_NE(p, nullptr);
  auto b = TopoBackend::bind(*p);
  ASSERT_TRUE(b.ok()) << b.error().message;
  auto listed = b->platforms_xml();
  ASSERT_TRUE(listed.ok()) << listed.error().message;
  ASSERT_TRUE(listed->has_value());
  EXPECT_EQ(**listed, "<platforms><platform name=\"box\"/></platforms>");
  auto node = b->node_xml(machine("emu"));
  ASSERT_TRUE(node.ok()) << node.error().message;
  ASSERT_TRUE(node->has_value());
  EXPECT_EQ(**node, "<node devices=\"4\"/>");
  EXPECT_EQ(*symbol(*p, "topo_test_free_calls"), 2);

  auto f = load("fails");
  ASSERT_NE(f, nullptr);
  auto failing = TopoBackend::bind(*f);
  ASSERT_TRUE(failing.ok());
  auto refused = failing->platforms_xml();
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("list_platforms returned ERROR: the platform table is "
                                         "corrupt"),
            std::string::npos)
      << refused.error().message;
  auto wrong = failing->node_xml(machine("emu"));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.error().message.find("describe_node returned INVALID_ARGUMENT: no instance "
                                       "with 4 devices"),
            std::string::npos)
      << wrong.error().message;

  for (const char* variant : {"no_graph", "unsupported", "pre_catalogue"}) {
    auto q = load(variant);
    ASSERT_NE(q, nullptr);
    auto none = TopoBackend::bind(*q);
    ASSERT_TRUE(none.ok()) << variant << ": " << none.error().message;
    auto l = none->platforms_xml();
    ASSERT_TRUE(l.ok()) << variant;
    EXPECT_FALSE(l->has_value()) << variant;
    if (std::string(variant) != "unsupported") {
      auto n = none->node_xml(machine("emu"));
      ASSERT_TRUE(n.ok()) << variant;
      EXPECT_FALSE(n->has_value()) << variant;
    }
  }
}

TEST(GraphbuildTopoBackend, NodeOrderComesFromThePluginAndIsChecked) {
  const std::vector<int> pods = {7, 7, 9, 9};
  auto p = load("default");
  ASSERT_NE(p, nullptr);
  auto b = TopoBackend::bind(*p);
  ASSERT_TRUE(b.ok());
  auto order = b->order_nodes(machine("emu"), pods);
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_EQ(*order, (std::vector<int>{3, 2, 1, 0}));
  for (const char* variant : {"no_graph", "unsupported"}) {  // no slot / UNSUPPORTED: index order
    auto q = load(variant);
    ASSERT_NE(q, nullptr);
    auto c = TopoBackend::bind(*q);
    ASSERT_TRUE(c.ok());
    auto same = c->order_nodes(machine("emu"), pods);
    ASSERT_TRUE(same.ok()) << variant;
    EXPECT_EQ(*same, (std::vector<int>{0, 1, 2, 3})) << variant;
  }
  auto bad = load("bad_order");
  ASSERT_NE(bad, nullptr);
  auto d = TopoBackend::bind(*bad);
  ASSERT_TRUE(d.ok());
  auto refused = d->order_nodes(machine("emu"), pods);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("not a permutation of the 4 nodes (entry 1 is 0)"),
            std::string::npos)
      << refused.error().message;
}

TEST(GraphbuildTopoBackend, BadVtablesAreRefusedAtBind) {
  struct Case {
    const char* variant;
    const char* expected;
  };
  for (const Case& c : {Case{"old_ops", "topology ops version 0, this host reads 1"},
                        Case{"short_ops", "is smaller than nccom_topo_ops_t"},
                        Case{"null_probe", "mandatory slot probe is NULL"}}) {
    auto p = load(c.variant);
    ASSERT_NE(p, nullptr) << c.variant;
    auto b = TopoBackend::bind(*p);
    ASSERT_FALSE(b.ok()) << c.variant;
    EXPECT_NE(b.error().message.find(c.expected), std::string::npos) << b.error().message;
  }
}

}  // namespace
}  // namespace nccom::graphbuild

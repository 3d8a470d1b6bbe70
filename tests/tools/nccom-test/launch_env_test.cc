// Launcher detection from given environment maps (never the real one):
// local, a local rank, mpirun (OpenMPI), srun (Slurm); --net's variables.
#include "launch_env.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nccom::nccomtest {
namespace {

Options opts(const std::vector<std::string>& args) {
  auto o = parse_options(args);
  EXPECT_TRUE(o.ok()) << (o.ok() ? "" : o.error().message);
  return o.ok() ? *o : Options{};
}

std::string fails(const EnvMap& env, const Options& o) {
  auto p = detect_placement(env, o);
  EXPECT_FALSE(p.ok());
  return p.ok() ? "" : p.error().message;
}

EnvMap ompi(int rank, int size, int local, int local_size) {
  return {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
          {"OMPI_COMM_WORLD_SIZE", std::to_string(size)},
          {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(local)},
          {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(local_size)},
          {"OMPI_MCA_ess_base_jobid", "1962213377"}};
}

EnvMap slurm(int rank, int node, int local) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_STEP_NUM_TASKS", "8"},
          {"SLURM_STEP_NUM_NODES", "2"},
          {"SLURM_NODEID", std::to_string(node)},
          {"SLURM_LOCALID", std::to_string(local)},
          {"SLURM_STEP_TASKS_PER_NODE", "4(x2)"},
          {"SLURM_JOB_ID", "4242"},
          {"SLURM_STEP_ID", "0"}};
}

TEST(NccomTestLaunch, NoLauncherMeansALocalParent) {
  auto p = detect_placement({}, opts({"-r", "8", "-N", "2", "allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->launcher, Launcher::LocalParent);
  EXPECT_EQ(p->size, 8);
  EXPECT_EQ(p->hosts, 2);
  EXPECT_EQ(p->local_n, 4);
}

TEST(NccomTestLaunch, LocalShapesThatCannotWork) {
  EXPECT_EQ(fails({}, opts({"-r", "4", "-N", "8", "allr"})),
            "-N 8 is more than -r 4: every emulated host needs at least one rank");
  EXPECT_NE(fails({}, opts({"-r", "33", "-N", "2", "allr"})).find("17 ranks per emulated host"),
            std::string::npos);
  EXPECT_NE(
      fails({}, opts({"-r", "32", "allr"})).find("more than the 16 devices an emulated host has"),
      std::string::npos);
  EXPECT_NE(fails({}, opts({"-r", "512", "-N", "64", "allr"})).find("more than the 256 ranks"),
            std::string::npos);
  EXPECT_EQ(fails({}, opts({"--root", "2", "bcast"})), "--root 2 is not a rank of -r 2");
}

TEST(NccomTestLaunch, LocalRankPlacementSplitsRanksEvenlyOverHosts) {
  const Options o = opts({"-r", "8", "-N", "2", "allr"});
  for (int i = 0; i < 8; ++i) {
    const Placement p = local_rank_placement(o, i, "127.0.0.1:5000");
    EXPECT_EQ(p.host, i / 4);
    EXPECT_EQ(p.local_rank, i % 4);
    EXPECT_EQ(p.local_n, 4);
    // What the parent hands the rank is what the rank reads back.
    auto back = detect_placement(
        {{kChildVar, encode_child(p)}, {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:5000"}}, o);
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->launcher, Launcher::LocalChild);
    EXPECT_EQ(back->rank, i);
    EXPECT_EQ(back->size, 8);
    EXPECT_EQ(back->host, i / 4);
    EXPECT_EQ(back->local_rank, i % 4);
    EXPECT_EQ(back->hosts, 2);
    EXPECT_EQ(back->root_comm_id, "127.0.0.1:5000");
  }
}

TEST(NccomTestLaunch, MalformedChildVariable) {
  const Options o = opts({"allr"});
  for (const char* v : {"1,2,0,0,1", "2,2,0,0,1,1", "1,2,0,1,1,1", "a,b,c,d,e,f", "1,2,0,0,1,9",
                        "-1,2,0,0,1,1", "1,2,1,0,1,1", "1,2,0,0,1,1,7", "1,2,0,0,1,0"}) {
    EXPECT_NE(
        fails({{kChildVar, v}, {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:1"}}, o).find("is malformed"),
        std::string::npos)
        << v;
  }
  EXPECT_NE(fails({{kChildVar, "0,2,0,0,2,1"}}, o).find("NEURON_RT_ROOT_COMM_ID is not"),
            std::string::npos);
}

TEST(NccomTestLaunch, MpirunOnOneMachineDerivesALoopbackRoot) {
  auto p = detect_placement(ompi(2, 4, 2, 4), opts({"allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->launcher, Launcher::Mpirun);
  EXPECT_EQ(p->rank, 2);
  EXPECT_EQ(p->size, 4);
  EXPECT_EQ(p->host, 0);
  EXPECT_EQ(p->local_rank, 2);
  EXPECT_EQ(p->local_n, 4);
  EXPECT_EQ(p->root_comm_id, "127.0.0.1:" + std::to_string(derived_port("ompi:1962213377")));
  // Every rank of the job derives the same address.
  auto q = detect_placement(ompi(0, 4, 0, 4), opts({"allr"}));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->root_comm_id, p->root_comm_id);
}

// Uneven shapes: in blocks, the first r % N hosts one rank more.
TEST(NccomTestLaunch, LocalRankPlacementGivesTheFirstHostsTheRemainder) {
  struct Case {
    int ranks, hosts;
    std::vector<int> per_host;
  };
  const Case cases[] = {{3, 2, {2, 1}},
                        {8, 3, {3, 3, 2}},
                        {5, 5, {1, 1, 1, 1, 1}},
                        {7, 2, {4, 3}},
                        {9, 4, {3, 2, 2, 2}}};
  for (const Case& c : cases) {
    const Options o = opts({"-r", std::to_string(c.ranks), "-N", std::to_string(c.hosts), "allr"});
    ASSERT_TRUE(detect_placement({}, o).ok()) << c.ranks << " on " << c.hosts;
    // Walk the hosts' blocks independently of the implementation's formula.
    int rank = 0;
    for (int h = 0; h < c.hosts; ++h) {
      for (int l = 0; l < c.per_host[static_cast<size_t>(h)]; ++l, ++rank) {
        const Placement p = local_rank_placement(o, rank, "127.0.0.1:5000");
        EXPECT_EQ(p.host, h) << c.ranks << " on " << c.hosts << ", rank " << rank;
        EXPECT_EQ(p.local_rank, l) << c.ranks << " on " << c.hosts << ", rank " << rank;
        EXPECT_EQ(p.local_n, c.per_host[static_cast<size_t>(h)])
            << c.ranks << " on " << c.hosts << ", rank " << rank;
        auto back = detect_placement(
            {{kChildVar, encode_child(p)}, {"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:5000"}}, o);
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(back->hosts, c.hosts);
        EXPECT_EQ(back->host, h);
        EXPECT_EQ(back->local_n, c.per_host[static_cast<size_t>(h)]);
      }
    }
    EXPECT_EQ(rank, c.ranks);
  }
}

TEST(NccomTestLaunch, MpirunOnOneMachineEmulatesHostsWithN) {
  auto p = detect_placement(ompi(3, 4, 3, 4), opts({"-N", "2", "allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->host, 1);
  EXPECT_EQ(p->local_rank, 1);
  EXPECT_EQ(p->local_n, 2);
  EXPECT_EQ(p->hosts, 2);
  // 4 ranks on 3 emulated hosts: 2, 1, 1.
  auto q = detect_placement(ompi(3, 4, 3, 4), opts({"-N", "3", "allr"}));
  ASSERT_TRUE(q.ok()) << q.error().message;
  EXPECT_EQ(q->host, 2);
  EXPECT_EQ(q->local_rank, 0);
  EXPECT_EQ(q->local_n, 1);
  EXPECT_NE(
      fails(ompi(3, 4, 3, 4), opts({"-N", "5", "allr"})).find("-N 5 is more than the 4 ranks"),
      std::string::npos);
}

TEST(NccomTestLaunch, MpirunChecksRanksAndRoot) {
  EXPECT_EQ(fails(ompi(0, 4, 0, 4), opts({"-r", "8", "allr"})),
            "-r 8 but mpirun started 4 processes (leave -r out under a launcher)");
  EXPECT_NE(fails(ompi(0, 4, 0, 4), opts({"--root", "5", "bcast"})).find("--root 5 is not a rank"),
            std::string::npos);
  EnvMap env = ompi(0, 4, 0, 4);
  env["OMPI_COMM_WORLD_RANK"] = "abc";
  EXPECT_EQ(fails(env, opts({"allr"})), "OMPI_COMM_WORLD_RANK=abc is not an integer in 0..3");
  env = ompi(0, 4, 0, 4);
  env.erase("OMPI_COMM_WORLD_LOCAL_SIZE");
  EXPECT_EQ(fails(env, opts({"allr"})), "OMPI_COMM_WORLD_LOCAL_SIZE is not set");
}

TEST(NccomTestLaunch, MpirunAcrossMachinesNeedsTheRootAddress) {
  EnvMap env = ompi(5, 8, 1, 4);
  env["OMPI_MCA_orte_num_nodes"] = "2";
  EXPECT_NE(fails(env, opts({"allr"})).find("NEURON_RT_ROOT_COMM_ID is not set"),
            std::string::npos);
  env["NEURON_RT_ROOT_COMM_ID"] = "10.1.2.3:29500";
  auto p = detect_placement(env, opts({"allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->root_comm_id, "10.1.2.3:29500");
  EXPECT_EQ(p->root_source, "NEURON_RT_ROOT_COMM_ID");
  EXPECT_EQ(p->local_rank, 1);
  EXPECT_EQ(p->local_n, 4);
  EXPECT_EQ(p->hosts, 2);
  EXPECT_NE(fails(env, opts({"-N", "4", "allr"})).find("placed the ranks on 2 machines"),
            std::string::npos);
  EXPECT_TRUE(detect_placement(env, opts({"-N", "2", "allr"})).ok());
}

TEST(NccomTestLaunch, SrunStepAcrossNodes) {
  EnvMap env = slurm(5, 1, 1);
  EXPECT_NE(fails(env, opts({"allr"})).find("NEURON_RT_ROOT_COMM_ID is not set"),
            std::string::npos);
  env["NEURON_RT_ROOT_COMM_ID"] = "10.0.0.1:4000";
  auto p = detect_placement(env, opts({"allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->launcher, Launcher::Srun);
  EXPECT_EQ(p->rank, 5);
  EXPECT_EQ(p->size, 8);
  EXPECT_EQ(p->host, 1);
  EXPECT_EQ(p->hosts, 2);
  EXPECT_EQ(p->local_rank, 1);
  EXPECT_EQ(p->local_n, 4);
  env["SLURM_STEP_TASKS_PER_NODE"] = "4";
  EXPECT_NE(fails(env, opts({"allr"})).find("does not list 2 nodes"), std::string::npos);
  env["SLURM_STEP_TASKS_PER_NODE"] = "4(x2)";
  env["SLURM_LOCALID"] = "4";
  EXPECT_EQ(fails(env, opts({"allr"})), "SLURM_LOCALID=4 is not an integer in 0..3");
}

// Every emulated host's rank count, where this process can know them all.
TEST(NccomTestLaunch, KnownHostCounts) {
  auto counts = [](const EnvMap& env, const Options& o) {
    auto p = detect_placement(env, o);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
    return p.ok() ? known_host_counts(env, *p) : std::vector<int>{};
  };
  // Local: -r split over -N, the first hosts one more (8 on 3: 3, 3, 2).
  EXPECT_EQ(counts({}, opts({"-r", "8", "-N", "3", "allr"})), (std::vector<int>{3, 3, 2}));
  EXPECT_EQ(counts({}, opts({"-r", "10", "-N", "2", "allr"})), (std::vector<int>{5, 5}));
  // A rank a local launch started: its launcher asked.
  EXPECT_TRUE(counts({{"NCCOM_TEST_CHILD", "1,2,0,1,2,1"}, {"NEURON_RT_ROOT_COMM_ID", "1.2.3.4:5"}},
                     opts({"allr"}))
                  .empty());
  // mpirun on one machine, split by -N; across machines only its own count is known.
  EXPECT_EQ(counts(ompi(3, 4, 3, 4), opts({"-N", "3", "allr"})), (std::vector<int>{2, 1, 1}));
  EXPECT_EQ(counts(ompi(3, 4, 3, 4), opts({"allr"})), (std::vector<int>{4}));
  EnvMap across = ompi(5, 8, 1, 4);
  across["NEURON_RT_ROOT_COMM_ID"] = "10.1.2.3:29500";
  EXPECT_TRUE(counts(across, opts({"allr"})).empty());
  // srun across nodes: every node's count.
  EnvMap env = slurm(5, 1, 1);
  env["NEURON_RT_ROOT_COMM_ID"] = "10.0.0.1:4000";
  EXPECT_EQ(counts(env, opts({"allr"})), (std::vector<int>{4, 4}));
}

TEST(NccomTestLaunch, SrunOnOneNodeDerivesALoopbackRoot) {
  EnvMap env = {{"SLURM_PROCID", "1"},         {"SLURM_STEP_NUM_TASKS", "2"},
                {"SLURM_STEP_NUM_NODES", "1"}, {"SLURM_NODEID", "0"},
                {"SLURM_LOCALID", "1"},        {"SLURM_STEP_TASKS_PER_NODE", "2"},
                {"SLURM_JOB_ID", "77"},        {"SLURM_STEP_ID", "3"}};
  auto p = detect_placement(env, opts({"allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->root_comm_id, "127.0.0.1:" + std::to_string(derived_port("slurm:77.3")));
}

TEST(NccomTestLaunch, ABatchScriptIsNotAnSrunStep) {
  // sbatch's shell has SLURM_PROCID=0 but no step: nccom-test launches locally.
  auto p = detect_placement({{"SLURM_PROCID", "0"}, {"SLURM_JOB_ID", "9"}, {"SLURM_NTASKS", "8"}},
                            opts({"allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->launcher, Launcher::LocalParent);
}

TEST(NccomTestLaunch, OpenMpiWinsOverSlurm) {
  EnvMap env = ompi(1, 2, 1, 2);
  for (const auto& [k, v] : slurm(5, 1, 1)) env[k] = v;
  auto p = detect_placement(env, opts({"allr"}));
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->launcher, Launcher::Mpirun);
}

TEST(NccomTestLaunch, SlurmTaskLists) {
  EXPECT_EQ(expand_slurm_tasks("2(x3),1"), (std::vector<int>{2, 2, 2, 1}));
  EXPECT_EQ(expand_slurm_tasks("4"), (std::vector<int>{4}));
  EXPECT_EQ(expand_slurm_tasks("1,3(x2)"), (std::vector<int>{1, 3, 3}));
  for (const char* s : {"", "2(x", "2(y3)", "0", "x", "2(x0)", "2)"})
    EXPECT_TRUE(expand_slurm_tasks(s).empty()) << s;
}

TEST(NccomTestLaunch, DerivedPortsStayBelowTheEphemeralRange) {
  for (const char* k : {"", "ompi:1", "ompi:2", "slurm:123.0", "slurm:123.1"}) {
    const uint16_t p = derived_port(k);
    EXPECT_GE(p, 20000);
    EXPECT_LT(p, 30000);
    EXPECT_EQ(p, derived_port(k));
  }
  // FNV-1a of the empty key is its offset basis 2166136261.
  EXPECT_EQ(derived_port(""), 20000 + 2166136261u % 10000);
}

TEST(NccomTestLaunch, NetVariables) {
  EXPECT_TRUE(net_env(Net::Default).empty());
  using Pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(net_env(Net::Socket),
            (Pairs{{"NCCL_NET_PLUGIN", "socket"}, {"NCCOM_NET_USE_RUNTIME_PLUGIN", "false"}}));
  EXPECT_EQ(net_env(Net::Ofi), (Pairs{{"NCCL_NET_PLUGIN", ""},
                                      {"NCCOM_NET_USE_RUNTIME_PLUGIN", "true"},
                                      {"FI_PROVIDER", "tcp;ofi_rxm"}}));
}

}  // namespace
}  // namespace nccom::nccomtest

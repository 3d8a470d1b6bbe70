// The nccom-test binary's answers that need no engine: help, usage errors
// (one line, exit 2), shapes a launch cannot serve, a bad plot path.
#include "build_paths.h"
#include "child_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

const std::string kTool = std::string(NCCOM_BUILD_DIR) + "/bin/nccom-test";

nccom_test::ChildResult run(const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& env = {}) {
  return nccom_test::run_child(kTool, args, env);
}

size_t lines(const std::string& s) {
  return static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
}

TEST(NccomTestCli, Help) {
  const auto r = run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("usage: nccom-test"), std::string::npos);
  EXPECT_NE(r.out.find("--stepfactor"), std::string::npos);
  for (const char* option : {"--nworkers", "--nnodes", "--average", "--stats", "--show-algorithm"})
    EXPECT_NE(r.out.find(option), std::string::npos) << option;
}

TEST(NccomTestCli, UsageErrorsAreOneLineAndExitTwo) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const Case cases[] = {
      {{"--bogus", "allr"}, "nccom-test: unknown option --bogus (see --help)\n"},
      {{"allr", "-b"}, "nccom-test: -b needs a value\n"},
      {{},
       "nccom-test: name at least one operation (allr allg redsct sendrecv alltoall bcast "
       "reduce)\n"},
      {{"-r", "2", "-N", "3", "allr"},
       "nccom-test: -N 3 is more than -r 2: every emulated host needs at least one rank\n"},
      {{"permute"},
       "nccom-test: permute (a collective permute over a source-to-target mapping you choose) "
       "is not supported: the one permutation nccom-test runs is the ring shift rank r -> r+1; "
       "run sendrecv\n"},
      {{"allr", "alltoallv"},
       "nccom-test: alltoallv (all-to-all with a different count for each rank) is not "
       "supported: the engine's all-to-all moves equal blocks; run alltoall\n"},
      {{"allgv"},
       "nccom-test: allgv (all-gather with a different count for each rank) is not supported: "
       "the engine's all-gather takes equal counts; run allg\n"},
      {{"--plot", "/nonexistent-dir/x.svg", "allr"},
       "nccom-test: --plot /nonexistent-dir/x.svg: the directory /nonexistent-dir does not exist "
       "or is not "
       "writable\n"},
  };
  for (const Case& c : cases) {
    const auto r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says;
    EXPECT_EQ(r.err, c.says);
    EXPECT_EQ(lines(r.err), 1u);
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST(NccomTestCli, LauncherMismatchesAreUsageErrors) {
  const std::map<std::string, std::string> mpi = {{"OMPI_COMM_WORLD_RANK", "0"},
                                                  {"OMPI_COMM_WORLD_SIZE", "4"},
                                                  {"OMPI_COMM_WORLD_LOCAL_RANK", "0"},
                                                  {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                                  {"OMPI_MCA_orte_num_nodes", "2"}};
  auto r = run({"allr"}, mpi);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("NEURON_RT_ROOT_COMM_ID is not set"), std::string::npos) << r.err;
  EXPECT_EQ(lines(r.err), 1u);
  auto env = mpi;
  env["NEURON_RT_ROOT_COMM_ID"] = "127.0.0.1:1";
  r = run({"-r", "2", "allr"}, env);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "nccom-test: -r 2 but mpirun started 4 processes (leave -r out under a launcher)\n");
}

// A shape libnccom's topology does not describe is refused while the
// arguments are read, in the topology's own words, before any rank starts:
// one line, exit 2, nothing else printed.
TEST(NccomTestCli, HostsTheTopologyRefusesAreUsageErrors) {
  const std::string reason =
      "neuron: topo_neuron: platform emu has no instance with 5 devices (it has 1, 2, 3, 4, 8, "
      "16)";
  auto r = run({"-r", "10", "-N", "2", "-b", "8", "-e", "8", "allr"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("nccom-test: -r 10 -N 2 puts 5 ranks on emulated host 0: " + reason, 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("; topology plugin nccl declines too: choose other -r and -N\n"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // Uneven hosts: the one that does not fit is named (9 on 2: 5 and 4).
  r = run({"-r", "9", "-N", "2", "allr"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("nccom-test: -r 9 -N 2 puts 5 ranks on emulated host 0: ", 0), 0u) << r.err;
}

// Under a launcher on one machine every host's count is known: refused
// the same way by every rank, before it joins.
TEST(NccomTestCli, HostsTheTopologyRefusesUnderMpirun) {
  const auto r = run({"-N", "2", "allr"}, {{"OMPI_COMM_WORLD_RANK", "3"},
                                           {"OMPI_COMM_WORLD_SIZE", "10"},
                                           {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                                           {"OMPI_COMM_WORLD_LOCAL_SIZE", "10"},
                                           {"OMPI_MCA_ess_base_jobid", "77"}});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("nccom-test: mpirun with 10 ranks on 2 hosts puts 5 ranks on emulated "
                        "host 0: neuron: topo_neuron: platform emu has no instance with 5 devices",
                        0),
            0u)
      << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

}  // namespace

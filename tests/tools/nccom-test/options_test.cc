// nccom-test's command line: good and bad options, sizes, the size series.
#include "options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nccom::nccomtest {
namespace {

Options ok(const std::vector<std::string>& args) {
  auto o = parse_options(args);
  EXPECT_TRUE(o.ok()) << (o.ok() ? "" : o.error().message);
  return o.ok() ? *o : Options{};
}

std::string bad(const std::vector<std::string>& args) {
  auto o = parse_options(args);
  EXPECT_FALSE(o.ok());
  return o.ok() ? "" : o.error().message;
}

TEST(NccomTestOptions, TheIssueCommandLine) {
  const Options o = ok(
      {"-r", "8", "-N", "2", "-b", "8", "-e", "64M", "-f", "2", "-d", "fp32", "--check", "allr"});
  EXPECT_EQ(o.ranks, 8);
  EXPECT_TRUE(o.ranks_given);
  EXPECT_EQ(o.nodes, 2);
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 64u << 20);
  EXPECT_EQ(o.step_factor, 2u);
  EXPECT_EQ(o.dtype, DType::Fp32);
  EXPECT_TRUE(o.check);
  ASSERT_EQ(o.ops.size(), 1u);
  EXPECT_EQ(o.ops[0], Op::AllReduce);
}

TEST(NccomTestOptions, Defaults) {
  const Options o = ok({"allr"});
  EXPECT_EQ(o.ranks, 2);
  EXPECT_FALSE(o.ranks_given);
  EXPECT_EQ(o.nodes, 1);
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 1u << 20);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_EQ(o.redop, RedOp::Sum);
  EXPECT_EQ(o.net, Net::Default);
  EXPECT_EQ(o.timeout_ms, 60000u);
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.json);
}

TEST(NccomTestOptions, LongFormsValuesAndSeveralOperations) {
  const Options o = ok({"--ranks=4",     "--nodes",    "2",
                        "--minbytes=1K", "--maxbytes", "1M",
                        "--iters",       "3",          "--warmup_iters=0",
                        "--datatype",    "bf16",       "--op",
                        "max",           "--root",     "3",
                        "--json",        "--plot",     "/tmp/x.svg",
                        "--net",         "OFI",        "--timeout-ms",
                        "5000",          "all_gather", "redsct",
                        "bcast",         "Sendrecv",   "alltoall",
                        "reduce",        "allreduce"});
  EXPECT_EQ(o.ranks, 4);
  EXPECT_EQ(o.min_bytes, 1024u);
  EXPECT_EQ(o.iters, 3);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.dtype, DType::Bf16);
  EXPECT_EQ(o.redop, RedOp::Max);
  EXPECT_EQ(o.root, 3);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.plot, "/tmp/x.svg");
  EXPECT_EQ(o.net, Net::Ofi);
  EXPECT_EQ(o.timeout_ms, 5000u);
  const std::vector<Op> want = {Op::AllGather, Op::ReduceScatter, Op::Broadcast, Op::SendRecv,
                                Op::AllToAll,  Op::Reduce,        Op::AllReduce};
  EXPECT_EQ(o.ops, want);
}

// Neuron's nccom-test spellings: --nworkers is -r, --nnodes is -N.
TEST(NccomTestOptions, NeuronSpellings) {
  const Options o = ok({"--nworkers", "4", "--nnodes=2", "--stats", "--show-algorithm", "allr"});
  EXPECT_EQ(o.ranks, 4);
  EXPECT_TRUE(o.ranks_given);
  EXPECT_EQ(o.nodes, 2);
  EXPECT_TRUE(o.nodes_given);
  EXPECT_TRUE(o.stats);
  EXPECT_TRUE(o.show_algorithm);
  const Options d = ok({"allr"});
  EXPECT_FALSE(d.stats);
  EXPECT_FALSE(d.show_algorithm);
  EXPECT_EQ(bad({"--nworkers", "0", "allr"}), "--nworkers must be in 1..16384, got 0");
  EXPECT_EQ(bad({"allr", "--nnodes"}), "--nnodes needs a value");
}

// nccl-tests' -a: what the time column shows; the slowest rank by default.
TEST(NccomTestOptions, AverageChoosesTheTimeColumn) {
  EXPECT_EQ(ok({"allr"}).average, TimeOf::Max);
  EXPECT_EQ(ok({"-a", "0", "allr"}).average, TimeOf::Rank0);
  EXPECT_EQ(ok({"-a", "1", "allr"}).average, TimeOf::Avg);
  EXPECT_EQ(ok({"--average", "2", "allr"}).average, TimeOf::Min);
  EXPECT_EQ(ok({"--average=3", "allr"}).average, TimeOf::Max);
  EXPECT_EQ(bad({"-a", "4", "allr"}),
            "-a must be in 0..3, got 4 (0 = rank 0's time, 1 = the mean over ranks, 2 = the "
            "fastest rank's, 3 = the slowest rank's)");
  EXPECT_EQ(bad({"--average", "max", "allr"}).rfind("--average needs an integer, got 'max'", 0),
            0u);
  EXPECT_STREQ(time_of_name(TimeOf::Rank0), "rank0");
  EXPECT_STREQ(time_of_name(TimeOf::Avg), "avg");
  EXPECT_STREQ(time_of_name(TimeOf::Min), "min");
  EXPECT_STREQ(time_of_name(TimeOf::Max), "max");
}

// Operations of Neuron's nccom-test that nccom-test does not run: refused
// in one line saying what they are and what to run instead.
TEST(NccomTestOptions, VariableCountAndPermuteOperationsAreRefused) {
  EXPECT_EQ(bad({"alltoallv"}),
            "alltoallv (all-to-all with a different count for each rank) is not supported: the "
            "engine's all-to-all moves equal blocks; run alltoall");
  EXPECT_EQ(bad({"allr", "ALLGV"}),
            "allgv (all-gather with a different count for each rank) is not supported: the "
            "engine's all-gather takes equal counts; run allg");
  EXPECT_EQ(bad({"permute"}),
            "permute (a collective permute over a source-to-target mapping you choose) is not "
            "supported: the one permutation nccom-test runs is the ring shift rank r -> r+1; "
            "run sendrecv");
  Op op;
  EXPECT_FALSE(parse_op("permute", &op));
  EXPECT_EQ(refused_op("sendrecv"), "");
  EXPECT_EQ(ok({"sendrecv"}).ops, std::vector<Op>{Op::SendRecv});
}

TEST(NccomTestOptions, CheckTakesAnOptionalZeroOrOne) {
  EXPECT_TRUE(ok({"-c", "allr"}).check);
  EXPECT_TRUE(ok({"-c", "1", "allr"}).check);
  EXPECT_FALSE(ok({"-c", "0", "allr"}).check);
  EXPECT_FALSE(ok({"--check=0", "allr"}).check);
  EXPECT_NE(bad({"--check=2", "allr"}).find("--check takes 0 or 1"), std::string::npos);
}

TEST(NccomTestOptions, HelpFlag) {
  auto o = parse_options({"-h"});
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->help);
}

TEST(NccomTestOptions, BadOptionsSayWhatAndWhy) {
  EXPECT_EQ(bad({"--frobnicate", "allr"}), "unknown option --frobnicate (see --help)");
  EXPECT_EQ(bad({"allr", "-r"}), "-r needs a value");
  EXPECT_EQ(bad({"-r", "x", "allr"}), "-r needs an integer, got 'x'");
  EXPECT_EQ(bad({"-r", "0", "allr"}), "-r must be in 1..16384, got 0");
  EXPECT_NE(bad({"-f", "1", "allr"}).find("use -i for additive steps"), std::string::npos);
  EXPECT_EQ(bad({"-f", "2", "-i", "8", "allr"}), "-f and -i exclude each other: give one step");
  EXPECT_EQ(bad({"-b", "2K", "-e", "1K", "allr"}), "-b (2048) is larger than -e (1024)");
  EXPECT_EQ(bad({"-b", "0", "allr"}), "-b must be at least 1 with -f (0 never grows)");
  EXPECT_NE(bad({"-d", "fp128", "allr"}).find("unknown data type 'fp128'"), std::string::npos);
  EXPECT_NE(bad({"-o", "xor", "allr"}).find("unknown reduction 'xor'"), std::string::npos);
  EXPECT_NE(bad({"allreduse"}).find("unknown operation 'allreduse'"), std::string::npos);
  EXPECT_NE(bad({}).find("name at least one operation"), std::string::npos);
  EXPECT_EQ(bad({"allr", "allreduce"}), "operation allr is listed twice");
  EXPECT_EQ(bad({"--net", "ib", "allr"}), "--net must be socket or ofi, got 'ib'");
  EXPECT_EQ(bad({"-r", "4", "--root", "4", "bcast"}), "--root 4 is not a rank of -r 4");
  EXPECT_EQ(bad({"-e", "5G", "allr"}), "-e must be at most 4G, got 5G");
  EXPECT_NE(bad({"-b", "1", "-e", "4G", "-i", "1", "allr"}).find("more than 1000 sizes"),
            std::string::npos);
  EXPECT_EQ(bad({"--timeout-ms", "0", "allr"}), "--timeout-ms must be in 1..3600000, got 0");
  EXPECT_EQ(bad({"--plot", "", "allr"}), "--plot needs a file name");
}

TEST(NccomTestOptions, ByteSizes) {
  EXPECT_EQ(*parse_bytes("8"), 8u);
  EXPECT_EQ(*parse_bytes("64K"), 65536u);
  EXPECT_EQ(*parse_bytes("64k"), 65536u);
  EXPECT_EQ(*parse_bytes("64KB"), 65536u);
  EXPECT_EQ(*parse_bytes("64KiB"), 65536u);
  EXPECT_EQ(*parse_bytes("1M"), 1048576u);
  EXPECT_EQ(*parse_bytes("2G"), 2147483648u);
  EXPECT_EQ(*parse_bytes("8B"), 8u);
  EXPECT_EQ(*parse_bytes("0"), 0u);
  for (const char* s : {"", "K", "1T", "-1", "1.5M", "12 K", "0x10", "1MM"}) {
    EXPECT_FALSE(parse_bytes(s).ok()) << s;
  }
  EXPECT_FALSE(parse_bytes("999999999999G").ok());
}

TEST(NccomTestOptions, SizeSeries) {
  Options o;
  o.min_bytes = 8;
  o.max_bytes = 64;
  o.step_factor = 2;
  EXPECT_EQ(size_series(o), (std::vector<uint64_t>{8, 16, 32, 64}));
  o.max_bytes = 100;
  o.step_factor = 4;
  EXPECT_EQ(size_series(o), (std::vector<uint64_t>{8, 32}));
  o.min_bytes = o.max_bytes = 77;
  EXPECT_EQ(size_series(o), (std::vector<uint64_t>{77}));
  o.step_factor = 0;
  o.step_bytes = 5;
  o.min_bytes = 0;
  o.max_bytes = 12;
  EXPECT_EQ(size_series(o), (std::vector<uint64_t>{0, 5, 10}));
  // The main job's series: 8 B to 64 MiB by 2 is 24 sizes.
  const Options issue = ok({"-b", "8", "-e", "64M", "-f", "2", "allr"});
  const auto s = size_series(issue);
  ASSERT_EQ(s.size(), 24u);
  EXPECT_EQ(s.front(), 8u);
  EXPECT_EQ(s.back(), 64u << 20);
  // -i given: additive.
  EXPECT_EQ(size_series(ok({"-b", "1K", "-e", "4K", "-i", "1K", "allr"})),
            (std::vector<uint64_t>{1024, 2048, 3072, 4096}));
}

}  // namespace
}  // namespace nccom::nccomtest

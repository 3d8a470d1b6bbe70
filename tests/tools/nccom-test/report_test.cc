// nccl-tests' bandwidth arithmetic, the table and the JSON document on
// hand-computed numbers.
#include "report.h"

#include "json_check.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace nccom::nccomtest {
namespace {

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

RunInfo info4() {
  RunInfo i;
  i.ranks = 4;
  i.hosts = 2;
  i.launcher = "local";
  i.dtype = DType::Fp32;
  i.redop = RedOp::Sum;
  i.root = 1;
  i.iters = 20;
  i.warmup = 5;
  i.check = true;
  i.timeout_ms = 60000;
  return i;
}

TEST(NccomTestReport, BusBandwidthFactorsOfNcclTests) {
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllReduce, 1), 0.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::ReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::AllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::Broadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::Reduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor(Op::SendRecv, 8), 1.0);
}

TEST(NccomTestReport, AlgorithmAndBusBandwidth) {
  // 1 GB in 1 s is 1 GB/s; an 8-rank all-reduce's bus moves 1.75 of it.
  const Timing t = make_timing(Op::AllReduce, 8, 1000000000, 1e6, 0);
  EXPECT_DOUBLE_EQ(t.algbw, 1.0);
  EXPECT_DOUBLE_EQ(t.busbw, 1.75);
  EXPECT_EQ(t.wrong, 0);
  // 1 MiB in 100 us: 10.48576 GB/s.
  EXPECT_DOUBLE_EQ(make_timing(Op::Broadcast, 4, 1048576, 100, -1).algbw, 10.48576);
  const Timing zero = make_timing(Op::AllReduce, 4, 0, 0, -1);
  EXPECT_EQ(zero.algbw, 0);
  EXPECT_EQ(zero.busbw, 0);
}

Row sample_row() {
  Row r;
  r.bytes = 1048576;
  r.count = 262144;
  r.out_of_place = make_timing(Op::AllReduce, 4, r.bytes, 100, 0);  // 10.49, busbw 15.73
  r.in_place = make_timing(Op::AllReduce, 4, r.bytes, 12345.6, 3);  // 0.08, busbw 0.13
  return r;
}

TEST(NccomTestReport, TableRowColumns) {
  const std::string line = table_row(info4(), Op::AllReduce, sample_row());
  EXPECT_EQ(words(line),
            (std::vector<std::string>{"1048576", "262144", "fp32", "sum", "-1", "100.00", "10.49",
                                      "15.73", "0", "12345.6", "0.08", "0.13", "3"}));
  // Non-reducing operations say so; rooted ones show the root.
  EXPECT_EQ(words(table_row(info4(), Op::Broadcast, sample_row()))[3], "none");
  EXPECT_EQ(words(table_row(info4(), Op::Broadcast, sample_row()))[4], "1");
  EXPECT_EQ(words(table_row(info4(), Op::Reduce, sample_row()))[3], "sum");
  // Unchecked columns read N/A; long times lose decimals to keep the width.
  Row r = sample_row();
  r.out_of_place.wrong = -1;
  r.out_of_place.time_us = 2500000;
  const auto w = words(table_row(info4(), Op::AllReduce, r));
  EXPECT_EQ(w[5], "2500000");
  EXPECT_EQ(w[8], "N/A");
}

TEST(NccomTestReport, TableHeaderNamesTheColumnsOverTheirValues) {
  const std::string head = table_header(info4(), Op::AllReduce);
  EXPECT_NE(head.find("# nccom-test allr: 4 rank(s) on 2 host(s) (local), fp32, 20 iters after 5 "
                      "warmup, check on"),
            std::string::npos);
  const std::string row = table_row(info4(), Op::AllReduce, sample_row());
  // The header line with the column names: each name ends where its value ends.
  std::istringstream lines(head);
  std::string names;
  for (std::string l; std::getline(lines, l);) {
    if (l.find("count") != std::string::npos) names = l;
  }
  ASSERT_FALSE(names.empty());
  auto end_of = [](const std::string& s, const std::string& word, size_t from) {
    return s.find(word, from) + word.size();
  };
  EXPECT_EQ(end_of(names, "size", 0), end_of(row, "1048576", 0));
  EXPECT_EQ(end_of(names, "count", 0), end_of(row, "262144", 0));
  EXPECT_EQ(end_of(names, "type", 0), end_of(row, "fp32", 0));
  EXPECT_EQ(end_of(names, "#wrong", 0), end_of(row, " 0 ", 0) - 1);
}

TEST(NccomTestReport, AverageBusBandwidthOverBothColumnsOfEveryRow) {
  OpResult r{Op::AllReduce, {}};
  EXPECT_EQ(avg_busbw(r), 0);
  Row a, b;
  a.out_of_place.busbw = 1;
  a.in_place.busbw = 2;
  b.out_of_place.busbw = 3;
  b.in_place.busbw = 4;
  r.rows = {a, b};
  EXPECT_DOUBLE_EQ(avg_busbw(r), 2.5);
  EXPECT_NE(table_footer(info4(), r).find("# Avg bus bandwidth    : 2.5\n"), std::string::npos);
}

TEST(NccomTestReport, ColumnsThatDoNotApplyReadNA) {
  Row r = sample_row();
  r.in_place.ran = false;
  r.in_place.wrong = -3;  // what combining an unused column leaves: ignored
  r.in_place.busbw = 99;
  EXPECT_EQ(words(table_row(info4(), Op::SendRecv, r)),
            (std::vector<std::string>{"1048576", "262144", "fp32", "none", "-1", "100.00", "10.49",
                                      "15.73", "0", "N/A", "N/A", "N/A", "N/A"}));
  OpResult res{Op::SendRecv, {r}};
  EXPECT_DOUBLE_EQ(avg_busbw(res), r.out_of_place.busbw);
  EXPECT_EQ(total_wrong({res}), 0);
  const std::string j = to_json(info4(), {res});
  std::string why;
  EXPECT_TRUE(json_check::valid(j, &why)) << why;
  EXPECT_NE(j.find("\"in_place\": null"), std::string::npos) << j;
}

TEST(NccomTestReport, FooterSaysWhetherTheCheckPassed) {
  OpResult r{Op::AllReduce, {sample_row()}};
  EXPECT_NE(table_footer(info4(), r).find("# Wrong elements       : 3 FAILED"), std::string::npos);
  r.rows[0].in_place.wrong = 0;
  EXPECT_NE(table_footer(info4(), r).find("# Wrong elements       : 0 OK"), std::string::npos);
  RunInfo unchecked = info4();
  unchecked.check = false;
  EXPECT_EQ(table_footer(unchecked, r).find("Wrong elements"), std::string::npos);
}

// The context of a run: versions, platform, configuration and where every
// rank runs.
RunInfo info_with_context() {
  RunInfo i = info4();
  i.versions = {"2.31.24.0", "abc123", "2.31.24.0", "def456", "2.31.24.0", "0123abcd"};
  i.platform = "trn2";
  i.started_utc = "2030-01-02T03:04:05Z";
  i.config_file = "/etc/nccom/nccom.toml";
  i.config_cluster = "trn2";
  i.config_digest = "fnv1a64:0123456789abcdef";
  i.launch_env = {{"NEURON_RT_ROOT_COMM_ID", "127.0.0.1:4000"}, {"CCOM_SOCKET_IFNAME", "lo"}};
  i.placement = {{0, 4242, "host-a", 0, 0, "fnv1a64:0123456789abcdef"},
                 {1, 4243, "host-a", 0, 1, "fnv1a64:0123456789abcdef"},
                 {2, 17, "host-b", 1, 0, "fnv1a64:0123456789abcdef"},
                 {3, 18, "host-b", 1, 1, "fnv1a64:0123456789abcdef"}};
  return i;
}

TEST(NccomTestReport, RunHeaderNamesVersionsPlatformConfigurationAndEveryRank) {
  EXPECT_EQ(run_header(info_with_context()),
            "# nccom-test 2.31.24.0 (git abc123), libnccom 2.31.24.0 (git def456), runtime "
            "2.31.24.0 (git 0123abcd), platform trn2\n"
            "# configuration: /etc/nccom/nccom.toml, cluster trn2, digest "
            "fnv1a64:0123456789abcdef\n"
            "#\n"
            "#  Rank  0 Pid   4242 on     host-a emulated host 0 device  0\n"
            "#  Rank  1 Pid   4243 on     host-a emulated host 0 device  1\n"
            "#  Rank  2 Pid     17 on     host-b emulated host 1 device  0\n"
            "#  Rank  3 Pid     18 on     host-b emulated host 1 device  1\n"
            "#\n");
  // Unknown parts say so; no file: the built-in defaults.
  RunInfo bare = info4();
  bare.config_digest = "fnv1a64:00000000000000ff";
  EXPECT_EQ(run_header(bare),
            "# nccom-test unknown, libnccom unknown, runtime unknown, platform unknown\n"
            "# configuration: built-in defaults (no file), digest fnv1a64:00000000000000ff\n"
            "#\n");
  bare.config_error = "not resolved: NCCOM_CONFIG=/x: no such file";
  EXPECT_NE(run_header(bare).find("# configuration: not resolved: NCCOM_CONFIG=/x: no such file\n"),
            std::string::npos);
  EXPECT_EQ(job_hostnames(info_with_context()), (std::vector<std::string>{"host-a", "host-b"}));
}

// -a picks the time column from the combined times; JSON keeps all of them.
TEST(NccomTestReport, TimeColumnAsAverageChooses) {
  const RankTimes t{20, 10, 25, 40};  // rank 0, min, avg, max
  EXPECT_EQ(chosen_time(t, TimeOf::Rank0), 20);
  EXPECT_EQ(chosen_time(t, TimeOf::Avg), 25);
  EXPECT_EQ(chosen_time(t, TimeOf::Min), 10);
  EXPECT_EQ(chosen_time(t, TimeOf::Max), 40);
  // 1 MB in 25 us (the mean): 40 GB/s; a 4-rank all-reduce's bus 60 GB/s.
  const Timing avg = make_timing(Op::AllReduce, 4, 1000000, t, TimeOf::Avg, 0);
  EXPECT_DOUBLE_EQ(avg.time_us, 25);
  EXPECT_DOUBLE_EQ(avg.algbw, 40);
  EXPECT_DOUBLE_EQ(avg.busbw, 60);
  EXPECT_DOUBLE_EQ(avg.time_min_us, 10);
  EXPECT_DOUBLE_EQ(avg.time_avg_us, 25);
  EXPECT_DOUBLE_EQ(avg.time_max_us, 40);
  EXPECT_DOUBLE_EQ(make_timing(Op::AllReduce, 4, 1000000, t, TimeOf::Max, 0).algbw, 25);
  EXPECT_DOUBLE_EQ(make_timing(Op::AllReduce, 4, 1000000, t, TimeOf::Rank0, 0).algbw, 50);
  EXPECT_DOUBLE_EQ(make_timing(Op::AllReduce, 4, 1000000, t, TimeOf::Min, 0).algbw, 100);
  RunInfo i = info4();
  EXPECT_NE(table_header(i, Op::AllReduce).find(", time slowest rank's\n"), std::string::npos);
  i.average = TimeOf::Avg;
  EXPECT_NE(table_header(i, Op::AllReduce).find(", time mean over ranks\n"), std::string::npos);
  i.average = TimeOf::Rank0;
  EXPECT_NE(table_header(i, Op::AllReduce).find(", time rank 0's\n"), std::string::npos);
  i.average = TimeOf::Min;
  EXPECT_NE(table_header(i, Op::AllReduce).find(", time fastest rank's\n"), std::string::npos);
}

TEST(NccomTestReport, DefaultColumnsStayNcclTests) {
  Row r = sample_row();
  r.out_of_place.algorithm = r.in_place.algorithm = "ring";
  // Without --show-algorithm the algorithm is not a column: the exact line.
  EXPECT_EQ(table_row(info4(), Op::AllReduce, r),
            "      1048576        262144      fp32     sum      -1    100.00   10.49   15.73       "
            "0   12345.6    0.08    0.13       3\n");
  const std::string head = table_header(info4(), Op::AllReduce);
  EXPECT_NE(head.find("\n#" + std::string(64, ' ') + "out-of-place" + std::string(24, ' ') +
                      "in-place\n"
                      "#        size         count      type   redop    root      time   algbw   "
                      "busbw  #wrong      time   algbw   busbw  #wrong\n"
                      "#         (B)    (elements)                                (us)  (GB/s)  "
                      "(GB/s)              (us)  (GB/s)  (GB/s)\n"),
            std::string::npos)
      << head;
}

TEST(NccomTestReport, ShowAlgorithmAddsAnAlgoColumnPerPlacement) {
  RunInfo i = info4();
  i.show_algorithm = true;
  Row r = sample_row();
  r.out_of_place.algorithm = "rd";
  r.in_place.algorithm = "kangaring";
  EXPECT_EQ(table_row(i, Op::AllReduce, r),
            "      1048576        262144      fp32     sum      -1    100.00   10.49   15.73       "
            "0         rd   12345.6    0.08    0.13       3  kangaring\n");
  r.in_place.ran = false;
  r.out_of_place.algorithm = "peer";
  EXPECT_EQ(table_row(i, Op::AllToAll, r),
            "      1048576        262144      fp32    none      -1    100.00   10.49   15.73       "
            "0       peer       N/A     N/A     N/A     N/A        N/A\n");
  const std::string head = table_header(i, Op::AllReduce);
  EXPECT_NE(head.find("\n#" + std::string(69, ' ') + "out-of-place" + std::string(35, ' ') +
                      "in-place\n"
                      "#        size         count      type   redop    root      time   algbw   "
                      "busbw  #wrong       algo      time   algbw   busbw  #wrong       algo\n"
                      "#         (B)    (elements)                                (us)  (GB/s)  "
                      "(GB/s)                         (us)  (GB/s)  (GB/s)\n"),
            std::string::npos)
      << head;
}

TEST(NccomTestReport, FooterSaysWhereTheAlgorithmChanged) {
  OpResult r{Op::AllReduce, {}};
  EXPECT_NE(table_footer(info4(), r).find("# Algorithm            : unknown\n"), std::string::npos);
  for (uint64_t bytes : {8u, 64u, 512u, 4096u, 32768u}) {
    Row row = sample_row();
    row.bytes = bytes;
    row.out_of_place.algorithm = bytes <= 512 ? "rd" : "ring";
    r.rows.push_back(row);
  }
  EXPECT_EQ(table_footer(info4(), r),
            "# Avg bus bandwidth    : 7.92802\n"
            "# Algorithm            : rd up to 512 B, ring above\n"
            "# Wrong elements       : 15 FAILED\n"
            "#\n");
  r.rows[4].out_of_place.algorithm = "rd";
  EXPECT_EQ(algorithm_summary(r), "rd up to 512 B, ring from 4096 B up to 4096 B, rd above");
  for (Row& row : r.rows) row.out_of_place.algorithm = "peer";
  EXPECT_EQ(algorithm_summary(r), "peer");
}

TEST(NccomTestReport, IterationPercentilesByNearestRank) {
  std::vector<double> none;
  EXPECT_EQ(iter_stats(none).iters, 0);
  std::vector<double> five = {5, 1, 4, 2, 3};
  const IterStats a = iter_stats(five);
  EXPECT_EQ(a.iters, 5);
  EXPECT_EQ(a.min_us, 1);
  EXPECT_EQ(a.p50_us, 3);
  EXPECT_EQ(a.p90_us, 5);
  EXPECT_EQ(a.p99_us, 5);
  EXPECT_EQ(a.max_us, 5);
  std::vector<double> hundred;
  for (int i = 100; i >= 1; --i) hundred.push_back(i);
  const IterStats b = iter_stats(hundred);
  EXPECT_EQ(b.min_us, 1);
  EXPECT_EQ(b.p50_us, 50);
  EXPECT_EQ(b.p90_us, 90);
  EXPECT_EQ(b.p99_us, 99);
  EXPECT_EQ(b.max_us, 100);
  std::vector<double> one = {7.5};
  const IterStats c = iter_stats(one);
  EXPECT_EQ(c.min_us, 7.5);
  EXPECT_EQ(c.p99_us, 7.5);
}

TEST(NccomTestReport, StatsTableAfterTheMainTable) {
  OpResult r{Op::SendRecv, {sample_row()}};
  r.rows[0].out_of_place.stats = {20, 90.5, 100, 110.25, 150, 12345.6};
  r.rows[0].in_place.ran = false;
  EXPECT_EQ(stats_table(info4(), r),
            "# sendrecv per iteration (us): each iteration's slowest rank, over 20 iterations\n"
            "#     size(B)     placement         min         p50         p90         p99         "
            "max\n"
            "#     1048576  out-of-place       90.50      100.00      110.25      150.00     "
            "12345.6\n"
            "#\n");
}

TEST(NccomTestReport, NetUsedIsThePluginLibnccomSelected) {
  NetPluginInfo p;
  EXPECT_EQ(net_used(p), "unknown");
  p.known = true;
  p.name = "Socket";
  p.file = "/opt/nccom/lib/nccom/libnccom-net-socket.so";
  EXPECT_EQ(net_used(p), "socket");
  p.from_runtime = true;
  p.file = "/opt/nccom/lib/libnccom-net.so";
  EXPECT_EQ(net_used(p), "ofi");
  p.from_runtime = false;
  p.name = "Acme IB";
  p.file = "/opt/acme/libnccl-net-acme.so";
  EXPECT_EQ(net_used(p), "Acme IB");
  RunInfo i = info4();
  i.net_plugin = p;
  i.net = Net::Socket;
  EXPECT_NE(table_header(i, Op::AllReduce).find(", net Acme IB, time"), std::string::npos);
  i.net = Net::Default;
  EXPECT_NE(table_header(i, Op::AllReduce).find(", net Acme IB (default), time"),
            std::string::npos);
}

TEST(NccomTestReport, JsonDescribesTheRun) {
  RunInfo i = info_with_context();
  i.stats = true;
  i.average = TimeOf::Avg;
  i.net = Net::Default;
  i.net_plugin.known = true;
  i.net_plugin.name = "Socket";
  i.net_plugin.file = "/x/libnccom-net-socket.so";
  Row row = sample_row();
  row.out_of_place =
      make_timing(Op::AllReduce, 4, row.bytes, RankTimes{100, 80, 100, 125}, TimeOf::Avg, 0);
  row.out_of_place.algorithm = "ring";
  row.out_of_place.stats = {20, 90.5, 100, 110.25, 150, 160};
  row.in_place.algorithm = "ring";
  const std::string j = to_json(i, {{Op::AllReduce, {row}}});
  std::string why;
  ASSERT_TRUE(json_check::valid(j, &why)) << why << "\n" << j;
  for (const char* want :
       {"\"schema\": 2,",
        "\"version\": {\"nccom_test\": \"2.31.24.0\", \"nccom_test_git\": \"abc123\", "
        "\"libnccom\": \"2.31.24.0\", \"libnccom_git\": \"def456\", \"runtime\": "
        "\"2.31.24.0\", \"runtime_git\": \"0123abcd\"},",
        "\"started_utc\": \"2030-01-02T03:04:05Z\",", "\"platform\": \"trn2\",",
        "\"emulated_hosts\": 2,", "\"hosts\": [\"host-a\", \"host-b\"],",
        "{\"rank\": 2, \"pid\": 17, \"hostname\": \"host-b\", \"host\": 1, \"device\": 0, "
        "\"config_digest\": \"fnv1a64:0123456789abcdef\"}",
        "\"config\": {\"file\": \"/etc/nccom/nccom.toml\", \"cluster\": \"trn2\", \"digest\": "
        "\"fnv1a64:0123456789abcdef\", \"same_on_every_rank\": true, \"error\": null, "
        "\"launch_env\": {\"NEURON_RT_ROOT_COMM_ID\": \"127.0.0.1:4000\", "
        "\"CCOM_SOCKET_IFNAME\": \"lo\"}},",
        "\"net\": \"socket\",", "\"net_requested\": \"default\",", "\"average\": 1,",
        "\"time_us_is\": \"avg\",", "\"iteration_stats\": true,",
        "\"algorithm_summary\": \"ring\", \"algorithms\": [{\"algorithm\": \"ring\", "
        "\"min_bytes\": 1048576, \"max_bytes\": 1048576}]",
        "\"out_of_place\": {\"time_us\": 100, \"time_min_us\": 80, \"time_avg_us\": 100, "
        "\"time_max_us\": 125, \"algbw_gbps\": 10.48576, \"busbw_gbps\": 15.72864, \"wrong\": 0, "
        "\"algorithm\": \"ring\", \"stats\": {\"iters\": 20, \"min_us\": 90.5, \"p50_us\": 100, "
        "\"p90_us\": 110.25, \"p99_us\": 150, \"max_us\": 160}}",
        "\"in_place\": {\"time_us\": 12345.6, \"time_min_us\": 12345.6, \"time_avg_us\": "
        "12345.6, \"time_max_us\": 12345.6, \"algbw_gbps\": 0.0849351996, \"busbw_gbps\": "
        "0.127402799, \"wrong\": 3, \"algorithm\": \"ring\", \"stats\": null}"}) {
    EXPECT_NE(j.find(want), std::string::npos) << want << "\n" << j;
  }
  // A rank that resolved another configuration shows.
  i.placement[3].config_digest = "fnv1a64:ffffffffffffffff";
  EXPECT_NE(to_json(i, {}).find("\"same_on_every_rank\": false"), std::string::npos);
}

TEST(NccomTestReport, JsonDocument) {
  std::vector<OpResult> results = {{Op::AllReduce, {sample_row()}}, {Op::AllGather, {}}};
  const std::string j = to_json(info4(), results);
  std::string why;
  EXPECT_TRUE(json_check::valid(j, &why)) << why << "\n" << j;
  for (const char* want : {"\"tool\": \"nccom-test\"",
                           "\"schema\": 2",
                           "\"ranks\": 4",
                           "\"emulated_hosts\": 2",
                           "\"launcher\": \"local\"",
                           "\"net\": \"unknown\"",
                           "\"net_requested\": \"default\"",
                           "\"datatype\": \"fp32\"",
                           "\"op\": \"allr\"",
                           "\"busbw_factor\": 1.5",
                           "\"size_bytes\": 1048576",
                           "\"count\": 262144",
                           "\"time_us\": 100,",
                           "\"algbw_gbps\": 10.48576",
                           "\"busbw_gbps\": 15.72864",
                           "\"wrong\": 3",
                           "\"op\": \"allg\"",
                           "\"rows\": []",
                           "\"wrong_total\": 3",
                           "\"redop\": \"none\"",
                           "\"check\": true"}) {
    EXPECT_NE(j.find(want), std::string::npos) << want << "\n" << j;
  }
  RunInfo unchecked = info4();
  unchecked.check = false;
  results[0].rows[0].in_place.wrong = results[0].rows[0].out_of_place.wrong = -1;
  const std::string u = to_json(unchecked, results);
  EXPECT_TRUE(json_check::valid(u, &why)) << why;
  EXPECT_NE(u.find("\"wrong_total\": null"), std::string::npos);
  EXPECT_NE(u.find("\"wrong\": null"), std::string::npos);
  EXPECT_TRUE(json_check::valid(to_json(info4(), {}), &why)) << why;
}

TEST(NccomTestReport, JsonCheckerRejectsBrokenDocuments) {
  std::string why;
  for (const char* bad :
       {"{", "{\"a\": }", "[1,]", "{\"a\" 1}", "\"x", "{} {}", "[nul]", "{\"a\": 01}"}) {
    EXPECT_FALSE(json_check::valid(bad, &why)) << bad;
  }
  EXPECT_TRUE(json_check::valid("{\"a\": [1, -2.5e3, true, null, \"q\\\"\"]}", &why)) << why;
}

}  // namespace
}  // namespace nccom::nccomtest

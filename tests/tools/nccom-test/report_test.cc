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

TEST(NccomTestReport, JsonDocument) {
  std::vector<OpResult> results = {{Op::AllReduce, {sample_row()}}, {Op::AllGather, {}}};
  const std::string j = to_json(info4(), results);
  std::string why;
  EXPECT_TRUE(json_check::valid(j, &why)) << why << "\n" << j;
  for (const char* want : {"\"tool\": \"nccom-test\"",
                           "\"schema\": 1",
                           "\"ranks\": 4",
                           "\"hosts\": 2",
                           "\"launcher\": \"local\"",
                           "\"net\": \"default\"",
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

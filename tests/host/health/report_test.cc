#include "health/report.h"

#include <gtest/gtest.h>

namespace nccom::health {
namespace {

constexpr uint64_t kComm = 0xc0ffee;

// A job of four processes, one rank each, on two hosts.
class Report : public testing::Test {
 protected:
  void SetUp() override {
    for (int r = 0; r < 4; ++r) {
      Member m;
      m.process = 100 + static_cast<uint64_t>(r);
      m.pid = 1000 + r;
      m.host = r < 2 ? "a" : "b";
      ProcessSnapshot s;
      s.process = m.process;
      s.pid = m.pid;
      s.host = m.host;
      s.comms.push_back(CommSnap{kComm, r, 4, "running"});
      s.streams.push_back(StreamSnap{kComm, r, 0, 42, 41, true, 10, -1, -1});
      m.snapshot = s;
      job_.members.push_back(m);
    }
    job_.comms.push_back(CommMembers{kComm, {100, 101, 102, 103}});
    job_.answered_by = 100;
    job_.elapsed_ms = 7;
    job_.timeout_ms = 1000;
  }
  StreamSnap& stream(int r) {
    return job_.members[static_cast<std::size_t>(r)].snapshot->streams[0];
  }
  void silence(int r, Reach reach, const std::string& why) {
    Member& m = job_.members[static_cast<std::size_t>(r)];
    m.reach = reach;
    m.why = why;
    m.snapshot.reset();
  }
  JobView job_;
};

TEST_F(Report, AHealthyJobHasNoFindings) {
  const Analysis a = analyse(job_);
  EXPECT_EQ(a.hosts, 2);
  EXPECT_TRUE(a.not_answering.empty());
  EXPECT_TRUE(a.behind.empty());
  EXPECT_TRUE(a.waits.empty());
  ASSERT_EQ(a.comms.size(), 1u);
  for (const RankStatus& r : a.comms[0].ranks) EXPECT_EQ(r.state, "running");
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("4 processes on 2 hosts"), std::string::npos) << text;
  EXPECT_NE(text.find("Processes not answering: none"), std::string::npos) << text;
  EXPECT_NE(text.find("4 ranks: 4 running"), std::string::npos) << text;
}

TEST_F(Report, NamesTheStoppedAndTheDeadWithTheirRanks) {
  silence(1, Reach::kUnresponsive, "no answer within 1000 ms");
  silence(3, Reach::kDead, "connection refused: its process is gone");
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.not_answering.size(), 2u);
  EXPECT_EQ(a.comms[0].ranks[1].state, "unresponsive");
  EXPECT_EQ(a.comms[0].ranks[3].state, "dead");
  const std::string text = render_text(job_, true);
  EXPECT_NE(text.find("UNRESPONSIVE: pid 1001 on host a (rank 1 of comm 0000000000c0ffee): no "
                      "answer within 1000 ms"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("DEAD: pid 1003 on host b (rank 3 of comm"), std::string::npos) << text;
  EXPECT_NE(text.find("rank 3 (host b, pid 1003): dead"), std::string::npos) << text;
  const std::string json = render_json(job_);
  EXPECT_NE(json.find("\"state\":\"unresponsive\",\"why\":\"no answer within 1000 ms\""),
            std::string::npos)
      << json;
}

// A job's failing ranks exit (dead) while the process they waited for is
// stopped: the stopped one is listed first, whatever the members' order,
// and those that left cleanly last.
TEST_F(Report, TheUnresponsiveAreListedBeforeTheDeadAndTheDeadBeforeThoseThatLeft) {
  silence(0, Reach::kLeft, "it said goodbye");
  silence(1, Reach::kDead, "connection refused: its process is gone");
  silence(2, Reach::kUnresponsive, "no answer within 1000 ms");
  silence(3, Reach::kDead, "connection reset: its process is gone");
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.not_answering.size(), 4u);
  EXPECT_EQ(a.not_answering[0]->pid, 1002);
  EXPECT_EQ(a.not_answering[1]->pid, 1001);
  EXPECT_EQ(a.not_answering[2]->pid, 1003);
  EXPECT_EQ(a.not_answering[3]->pid, 1000);
  const std::string text = render_text(job_, false);
  const auto stopped = text.find("UNRESPONSIVE: pid 1002");
  const auto dead = text.find("DEAD: pid 1001");
  const auto left = text.find("LEFT: pid 1000");
  ASSERT_NE(stopped, std::string::npos) << text;
  ASSERT_NE(dead, std::string::npos) << text;
  ASSERT_NE(left, std::string::npos) << text;
  EXPECT_LT(stopped, dead) << text;
  EXPECT_LT(dead, left) << text;
}

// The rank that died first (its link closed without a goodbye) is listed
// before the ranks that failed because of it and exited while the question
// was asked, whatever their ranks.
TEST_F(Report, AmongTheDeadTheFirstTheLinksFoundGoneComeFirst) {
  silence(1, Reach::kDead, "it closed the connection without answering");
  silence(2, Reach::kDead, "its health link closed without a goodbye");
  job_.members[2].dead_since_ms = 5000;
  silence(3, Reach::kDead, "its health link closed without a goodbye");
  job_.members[3].dead_since_ms = 4000;
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.not_answering.size(), 3u);
  EXPECT_EQ(a.not_answering[0]->pid, 1003);
  EXPECT_EQ(a.not_answering[1]->pid, 1002);
  EXPECT_EQ(a.not_answering[2]->pid, 1001);
}

TEST_F(Report, ARankThatBeganFewerExecutionsIsBehind) {
  stream(2).started = 41;
  stream(2).running = false;
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.behind.size(), 1u);
  EXPECT_EQ(a.behind[0].rank, 2);
  EXPECT_EQ(a.behind[0].peers_started, 42u);
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("rank 2 (host b, pid 1002) of comm 0000000000c0ffee, stream 0: began 41 "
                      "executions, its peers up to 42 (not running one now)"),
            std::string::npos)
      << text;
}

// Rank 2 was read at 100..104 ms (the collector's clock), the others at
// 110..120. A peer that began execution 42 long before rank 2 was read shows
// rank 2 behind; one that began it after can have overtaken rank 2 between
// the two reads, which says nothing about rank 2.
class ReportOrder : public Report {
 protected:
  void SetUp() override {
    Report::SetUp();
    for (int r = 0; r < 4; ++r) {
      Member& m = job_.members[static_cast<std::size_t>(r)];
      m.asked_ms = r == 2 ? 100 : 110;
      m.answered_ms = r == 2 ? 104 : 120;
    }
    stream(2).started = 41;
    stream(2).completed = 41;
    stream(2).running = false;
    stream(2).began_ago_ms = 30;
  }
};

TEST_F(ReportOrder, APeerThatBeganBeforeTheRankWasReadShowsItBehind) {
  // Began at 120 - 22 = 98 at the latest (2 ms of margin for whole
  // milliseconds): rank 2, read at 100 or later, had not begun it yet.
  for (int r : {0, 1, 3}) stream(r).began_ago_ms = 22;
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.behind.size(), 1u);
  EXPECT_EQ(a.behind[0].rank, 2);
  EXPECT_EQ(a.behind[0].peers_started, 42u);
}

TEST_F(ReportOrder, APeerThatMayHaveBegunAfterTheRankWasReadDoesNot) {
  // Began as late as 120 - 21 = 99 (+1 ms of rounding each way): perhaps
  // after rank 2 was read.
  for (int r : {0, 1, 3}) stream(r).began_ago_ms = 21;
  EXPECT_TRUE(analyse(job_).behind.empty());
  // One peer that proves it is enough, and the count is that peer's.
  stream(3).began_ago_ms = 25;
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.behind.size(), 1u);
  EXPECT_EQ(a.behind[0].rank, 2);
}

TEST_F(ReportOrder, WithoutTheTimesTheCountsAreComparedAsTheyAre) {
  // A peer too old to send began_ago_ms, or a member with no times.
  for (int r : {0, 1, 3}) stream(r).began_ago_ms.reset();
  EXPECT_EQ(analyse(job_).behind.size(), 1u);
  for (int r : {0, 1, 3}) stream(r).began_ago_ms = 0;
  job_.members[2].asked_ms = 0;
  EXPECT_EQ(analyse(job_).behind.size(), 1u);
}

TEST_F(Report, WaitsNameThePeerAndItsState) {
  silence(1, Reach::kUnresponsive, "no answer");
  stream(2).idle_ms = 5300;
  stream(2).peer = 1;
  stream(2).channel = 0;
  stream(2).block = 4;
  stream(0).idle_ms = 900;  // under the bound: moving, not waiting
  stream(0).peer = 3;
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.waits.size(), 1u);
  EXPECT_EQ(a.waits[0].rank, 2);
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("rank 2 (host b, pid 1002) of comm 0000000000c0ffee, stream 0 (basic "
                      "block 4), waits on rank 1 (host a, pid 1001) [unresponsive], channel 0, "
                      "for 5.3 s"),
            std::string::npos)
      << text;
  EXPECT_NE(render_json(job_).find("\"idle_ms\":5300,\"block\":4}"), std::string::npos);
}

TEST_F(Report, ErrorsCarryTheRankAndProcessThatSawThem) {
  job_.members[3].snapshot->errors.push_back(ErrorSnap{kComm, 3, 2500, "proxy: \"bad\"\tthing"});
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("rank 3 (host b, pid 1003), 2.5 s ago: proxy: \"bad\"\tthing"),
            std::string::npos)
      << text;
  const std::string json = render_json(job_);
  EXPECT_NE(json.find("\"text\":\"proxy: \\\"bad\\\"\\u0009thing\""), std::string::npos) << json;
}

TEST_F(Report, StallWarningsAreListedApartFromErrors) {
  job_.members[0].snapshot->warnings.push_back(ErrorSnap{
      kComm, 0, 1200, "no progress for 61000 ms (health.stall_warn_s): waiting on rank 1"});
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("Stall warnings: 1\n  rank 0 (host a, pid 1000), 1.2 s ago: no progress"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Errors: none"), std::string::npos) << text;
  const std::string json = render_json(job_);
  EXPECT_NE(json.find("\"stall_warnings\":[{\"comm\":"), std::string::npos) << json;
  EXPECT_NE(json.find("\"errors\":[]}"), std::string::npos) << json;
}

TEST_F(Report, ARankWhoseProcessIsUnknownIsSaidSo) {
  job_.comms[0].processes[2] = 999;  // no member answers for it
  const Analysis a = analyse(job_);
  EXPECT_EQ(a.comms[0].ranks[2].state, "unknown");
  EXPECT_EQ(a.comms[0].ranks[2].member, nullptr);
}

// A communicator the answering process has no table for is in init
// somewhere: its ranks are the ones that list themselves, and a rank that
// nobody lists is missing, named in the text even without -v.
TEST_F(Report, ACommunicatorInInitNamesItsMissingRanks) {
  constexpr uint64_t kNew = 0xbeef;
  for (int r = 0; r < 3; ++r) {
    job_.members[static_cast<std::size_t>(r)].snapshot->comms.push_back(
        CommSnap{kNew, r, 4, "init"});
  }
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.comms.size(), 2u);
  const CommSummary& c = a.comms[1];
  EXPECT_EQ(c.hash, kNew);
  ASSERT_EQ(c.nranks, 4);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(c.ranks[static_cast<std::size_t>(r)].state, "init");
    EXPECT_EQ(c.ranks[static_cast<std::size_t>(r)].member,
              &job_.members[static_cast<std::size_t>(r)]);
  }
  ASSERT_EQ(c.ranks.size(), 3u);  // the ranks that listed themselves
  EXPECT_EQ(c.missing, 1);
  EXPECT_EQ(c.missing_listed, std::vector<int>{3});
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("comm 000000000000beef: 4 ranks: 3 init, 1 missing"), std::string::npos)
      << text;
  EXPECT_NE(text.find("    missing: rank 3 (no process that answered holds them"),
            std::string::npos)
      << text;
  const std::string json = render_json(job_);
  EXPECT_NE(json.find("\"missing\":1,\"missing_ranks\":[3]}"), std::string::npos) << json;
}

// A line that claims a rank beyond the size the first line gave is ignored
// rather than written past the table.
TEST_F(Report, AnInitLineWithARankBeyondTheFirstSizeIsIgnored) {
  constexpr uint64_t kNew = 0xbeef;
  job_.members[0].snapshot->comms.push_back(CommSnap{kNew, 0, 2, "init"});
  job_.members[1].snapshot->comms.push_back(CommSnap{kNew, 3, 4, "init"});
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.comms.size(), 2u);
  ASSERT_EQ(a.comms[1].nranks, 2);
  ASSERT_EQ(a.comms[1].ranks.size(), 1u);
  EXPECT_EQ(a.comms[1].ranks[0].state, "init");
  EXPECT_EQ(a.comms[1].missing, 1);
}

// A communicator in init claims its size; nothing is allocated per rank it
// claims, and the text names the first missing ranks and counts the rest.
TEST_F(Report, AHugeClaimedSizeCostsNothingAndListsTheFirstMissing) {
  constexpr uint64_t kNew = 0xbeef;
  job_.members[0].snapshot->comms.push_back(CommSnap{kNew, 5, 2000000000, "init"});
  const Analysis a = analyse(job_);
  ASSERT_EQ(a.comms.size(), 2u);
  const CommSummary& c = a.comms[1];
  ASSERT_EQ(c.ranks.size(), 1u);
  EXPECT_EQ(c.missing, 1999999999);
  ASSERT_EQ(c.missing_listed.size(), kListedMissing);
  EXPECT_EQ(c.missing_listed[4], 4);
  EXPECT_EQ(c.missing_listed[5], 6);
  const std::string text = render_text(job_, false);
  EXPECT_NE(text.find("1 init, 1999999999 missing"), std::string::npos) << text;
  EXPECT_NE(text.find(", 32 and 1999999967 more (no process"), std::string::npos) << text;
  EXPECT_LT(text.size(), 4096u);
}

}  // namespace
}  // namespace nccom::health

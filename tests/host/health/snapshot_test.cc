#include "health/snapshot.h"

#include "health/state.h"

#include <gtest/gtest.h>

namespace nccom::health {
namespace {

class RegistryText : public testing::Test {
 protected:
  void SetUp() override { Registry::instance().clear(); }
  void TearDown() override { Registry::instance().clear(); }
};

// What the registry writes, the parser reads back: communicators, the
// streams that ran, links and errors (newlines in an error flattened).
TEST_F(RegistryText, SnapshotTextRoundTrips) {
  auto comm = Registry::instance().add_comm(0xfeed, 1, 4, {11, 22, 33, 44});
  comm->set_state(CommState::kRunning);
  StreamProgress& s = comm->stream(2);
  s.started = 7;
  s.completed = 6;
  s.running = true;
  s.last_progress_ms = now_ms();
  s.waiting_peer = 3;
  s.waiting_channel = 1;
  s.block = 5;
  s.began_ms = now_ms() - 2000;
  Registry::instance().record_error(0xfeed, 1, "proxy: it broke\nbadly");
  Registry::instance().record_warning(0xfeed, 1, "no progress for 61000 ms");
  const std::string text = Registry::instance().snapshot_text(22, 999, "host with space",
                                                              {LinkView{33, "unresponsive", 5200}});

  auto snap = parse_snapshot(text);
  ASSERT_TRUE(snap) << snap.error().message << "\n" << text;
  EXPECT_EQ(snap->process, 22u);
  EXPECT_EQ(snap->pid, 999);
  EXPECT_EQ(snap->host, "host_with_space");
  ASSERT_EQ(snap->comms.size(), 1u);
  EXPECT_EQ(snap->comms[0].hash, 0xfeedu);
  EXPECT_EQ(snap->comms[0].rank, 1);
  EXPECT_EQ(snap->comms[0].nranks, 4);
  EXPECT_EQ(snap->comms[0].state, "running");
  ASSERT_EQ(snap->streams.size(), 1u);  // streams that never ran are left out
  EXPECT_EQ(snap->streams[0].id, 2);
  EXPECT_EQ(snap->streams[0].started, 7u);
  EXPECT_EQ(snap->streams[0].completed, 6u);
  EXPECT_TRUE(snap->streams[0].running);
  EXPECT_EQ(snap->streams[0].peer, 3);
  EXPECT_EQ(snap->streams[0].channel, 1);
  EXPECT_EQ(snap->streams[0].block, 5);
  ASSERT_TRUE(snap->streams[0].began_ago_ms);
  EXPECT_GE(*snap->streams[0].began_ago_ms, 2000u);
  EXPECT_LT(*snap->streams[0].began_ago_ms, 60000u);
  ASSERT_EQ(snap->links.size(), 1u);
  EXPECT_EQ(snap->links[0].state, "unresponsive");
  EXPECT_EQ(snap->links[0].silent_ms, 5200u);
  ASSERT_EQ(snap->errors.size(), 1u);
  EXPECT_EQ(snap->errors[0].text, "proxy: it broke badly");
  ASSERT_EQ(snap->warnings.size(), 1u);
  EXPECT_EQ(snap->warnings[0].rank, 1);
  EXPECT_EQ(snap->warnings[0].text, "no progress for 61000 ms");
}

// A message with a tab or an escape sequence in it is written as one line of
// plain text: it reaches nccom-ras's terminal without its control characters.
TEST_F(RegistryText, ControlCharactersInAnErrorBecomeSpaces) {
  Registry::instance().record_error(1, 0, "a\tb\x1b[31mred\x7f");
  auto snap = parse_snapshot(Registry::instance().snapshot_text(1, 2, "h\x1b", {}));
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_EQ(snap->errors.size(), 1u);
  EXPECT_EQ(snap->errors[0].text, "a b [31mred ");
  EXPECT_EQ(snap->host, "h_");
}

// A long warning (a stall message names the peer, the op and the plugin) is
// cut to what one snapshot line may carry, and the line still parses.
TEST_F(RegistryText, ALongWarningIsCutToTheLineBound) {
  Registry::instance().record_warning(7, 0, std::string(3000, 'w'));
  const std::string text = Registry::instance().snapshot_text(1, 2, "h", {});
  auto snap = parse_snapshot(text);
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_EQ(snap->warnings.size(), 1u);
  EXPECT_EQ(snap->warnings[0].text, std::string(kMaxEventTextBytes, 'w'));
}

TEST_F(RegistryText, ErrorsAreBounded) {
  for (int i = 0; i < 100; ++i) Registry::instance().record_error(1, 0, "e" + std::to_string(i));
  const auto errors = Registry::instance().errors();
  ASSERT_EQ(errors.size(), kMaxErrors);
  EXPECT_EQ(errors.back().text, "e99");  // the newest are kept
  for (int i = 0; i < 100; ++i) Registry::instance().record_warning(1, 0, "w" + std::to_string(i));
  const auto warnings = Registry::instance().warnings();
  ASSERT_EQ(warnings.size(), kMaxErrors);
  EXPECT_EQ(warnings.back().text, "w99");
  EXPECT_EQ(Registry::instance().errors().size(), kMaxErrors);  // warnings evict no error
}

TEST(HealthSnapshot, RefusesWhatIsNotASnapshot) {
  struct Case {
    const char* text;
    const char* says;
  } cases[] = {
      {"", "empty"},
      {"hello\n", "not a health snapshot"},
      {"nccom-health 1\nend\n", "no \"process\""},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\n", "truncated"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nend", "newline"},
      {"nccom-health 1\nprocess key=zz pid=2 host=h\nend\n", "process needs"},
      {"nccom-health 1\ncomm hash=1 rank=0 nranks=1 state=x\nend\n", "before the"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\ncomm hash=1 rank=4 nranks=4 state=x\nend\n",
       "rank < nranks"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nstream comm=1 rank=0\nend\n", "stream needs"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nwarning comm=1 text=x\nend\n", "warning needs"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nstream comm=1 rank=0 id=0 started=1 "
       "completed=0 running=1 idle_ms=0 peer=-1 channel=-1 block=x\nend\n",
       "a bad block"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nstream comm=1 rank=0 id=0 started=1 "
       "completed=0 running=1 idle_ms=0 peer=-1 channel=-1 began_ago_ms=-3\nend\n",
       "a bad began_ago_ms"},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nend\nmore\n", "after \"end\""},
      {"nccom-health 1\nprocess key=1 pid=2 host=h\nprocess key=1 pid=2 host=h\nend\n", "second"},
  };
  for (const Case& c : cases) {
    auto snap = parse_snapshot(c.text);
    ASSERT_FALSE(snap) << c.text;
    EXPECT_NE(snap.error().message.find(c.says), std::string::npos)
        << c.text << " -> " << snap.error().message;
  }
}

// A process that predates the basic-block fields sends a stream line
// without them: it parses, with the block unknown.
TEST(HealthSnapshot, AStreamLineWithoutBlocksParses) {
  auto snap = parse_snapshot(
      "nccom-health 1\nprocess key=1 pid=2 host=h\nstream comm=1 rank=0 id=0 started=3 "
      "completed=2 running=1 idle_ms=7 peer=1 channel=0\nend\n");
  ASSERT_TRUE(snap) << snap.error().message;
  ASSERT_EQ(snap->streams.size(), 1u);
  EXPECT_EQ(snap->streams[0].block, -1);
  EXPECT_FALSE(snap->streams[0].began_ago_ms);
}

// What another process sends is read, but no control character in its
// texts (host, state words, error text) survives into a report.
TEST(HealthSnapshot, APeersControlCharactersBecomeQuestionMarks) {
  auto snap = parse_snapshot(
      "nccom-health 1\nprocess key=1 pid=2 host=h\x1b]0;x\x07\n"
      "comm hash=1 rank=0 nranks=1 state=run\x1b[2Jning\n"
      "link process=3 state=de\x7f\x01"
      "ad silent_ms=0\n"
      "error comm=1 rank=0 age_ms=0 text=it \x1b[31mbroke\tbadly\r\nend\n");
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ(snap->host, "h?]0;x?");
  ASSERT_EQ(snap->comms.size(), 1u);
  EXPECT_EQ(snap->comms[0].state, "run?[2Jning");
  ASSERT_EQ(snap->links.size(), 1u);
  EXPECT_EQ(snap->links[0].state, "de??ad");
  ASSERT_EQ(snap->errors.size(), 1u);
  EXPECT_EQ(snap->errors[0].text, "it ?[31mbroke?badly?");
}

TEST(HealthSnapshot, SkipsWhatANewerPeerAddsAndBoundsTheText) {
  auto snap =
      parse_snapshot("nccom-health 1\nprocess key=a pid=2 host=h extra=1\nfuture thing=1\nend\n");
  ASSERT_TRUE(snap) << snap.error().message;
  EXPECT_EQ(snap->process, 10u);

  std::string many = "nccom-health 1\nprocess key=1 pid=2 host=h\n";
  for (std::size_t i = 0; i < kMaxLines; ++i) many += "future x=1\n";
  many += "end\n";
  EXPECT_FALSE(parse_snapshot(many));
  std::string wide =
      "nccom-health 1\nprocess key=1 pid=2 host=" + std::string(2000, 'h') + "\nend\n";
  EXPECT_FALSE(parse_snapshot(wide));
}

}  // namespace
}  // namespace nccom::health

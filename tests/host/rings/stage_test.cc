// The stage after the all-gather (postset, kangaRing, MLA cycles) and the
// log lines it writes, read back from an NCCL_DEBUG_FILE-style log file.
#include "rings/stage.h"

#include "log/log.h"
#include "synthetic.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace nccom::rings {
namespace {

namespace fs = std::filesystem;
using test::Cluster;
using test::IntraOrder;
using test::Numbering;

// Routes INFO/WARN to a private file for the lifetime of the object.
class LogCapture {
 public:
  LogCapture() {
    std::string tmpl = (fs::temp_directory_path() / "nccom-graph-XXXXXX").string();
    if (mkdtemp(tmpl.data()) != nullptr) dir_ = tmpl;
    log::Settings s;
    s.level = log::Level::Info;
    s.subsys = log::kAll;
    s.file_pattern = (dir_ / "debug.log").string();
    ok_ = !dir_.empty() && log::configure(s).ok();
  }
  ~LogCapture() {
    log::reset();
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  bool ok() const { return ok_; }
  std::string text() const {
    log::reset();  // flush and close the file
    std::ifstream in(dir_ / "debug.log");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  fs::path dir_;
  bool ok_ = false;
};

StageInput stageFor(const Cluster& cl, const std::vector<TopoRanks>& frags, int rank) {
  StageInput in;
  in.postset = test::inputFor(cl, frags, rank, {});
  in.rankNode = cl.rankNode;
  for (int r = 0; r < cl.nRanks; ++r) in.rankMla.push_back(cl.localIndex[r] / 2);
  in.nodeRanks = nodeRanks(cl.graphs[cl.rankNode[rank]]);
  return in;
}

TEST(GraphKangaRing, StageBuildsAndLogsKangaRingAndMlaCycles) {
  // One node of 4 ranks, identity order; two kangaRing paths.
  const Cluster cl = test::makeCluster(1, 4, 1, Numbering::Blocked, IntraOrder::Identity);
  const KangaPaths paths = {{0, 1, 2, 3}, {2, 3, 0, 1}};
  std::vector<TopoRanks> frags;
  for (int r = 0; r < 4; ++r) frags.push_back(*preset(cl.graphs[0], r, paths));
  LogCapture capture;
  ASSERT_TRUE(capture.ok());
  StageInput in = stageFor(cl, frags, 0);
  in.switchV1 = true;
  in.nKangaPaths = 2;
  in.localKanga = paths;
  auto s = runPostsetStage(in);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->kangaRing.size(), 2u);
  EXPECT_EQ(s->mla.nMlaInCycle, 2);
  const std::string log = capture.text();
  for (const char* line :
       {"Channel 00/02 : 0 1 2 3", "Channel 01/02 : 0 1 2 3", "built 2 kangaring paths",
        "kangaring path[0]=0 1 2 3", "kangaring path[1]=2 3 0 1", "built 2 mla cycles"})
    EXPECT_CONTAINS(log, line);
  // Order of the original: rings, then kangaRing, then MLA cycles.
  EXPECT_LT(log.find("Channel 01/02"), log.find("built 2 kangaring paths"));
  EXPECT_LT(log.find("built 2 kangaring paths"), log.find("built 2 mla cycles"));
}

TEST(GraphKangaRing, StageOffSwitchV1BuildsNoKangaRing) {
  const Cluster cl = test::makeCluster(2, 2, 1, Numbering::Blocked, IntraOrder::Identity);
  const auto frags = test::gatherFragments(cl);
  LogCapture capture;
  ASSERT_TRUE(capture.ok());
  auto s = runPostsetStage(stageFor(cl, frags, 1));  // not rank 0: no channel lines
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->kangaRing.empty());
  const std::string log = capture.text();
  EXPECT_EQ(log.find("kangaring"), std::string::npos);
  EXPECT_EQ(log.find("Channel 00"), std::string::npos);
  EXPECT_CONTAINS(log, "built 2 mla cycles");
}

TEST(GraphMlaCycles, StageWarnsOrFailsOnViolations) {
  Cluster cl = test::makeCluster(1, 4, 1, Numbering::Blocked, IntraOrder::Identity);
  cl.graphs[0].intra = {1, 2, 0, 3};  // MLAs 0 1 0 1
  const auto frags = test::gatherFragments(cl);
  {
    LogCapture capture;
    ASSERT_TRUE(capture.ok());
    auto s = runPostsetStage(stageFor(cl, frags, 0));
    ASSERT_TRUE(s.ok());
    EXPECT_EQ(s->mla.violations.size(), 4u);
    EXPECT_CONTAINS(capture.text(), "ring 0 enters MLA 0 of node 0 twice");
  }
  StageInput strict = stageFor(cl, frags, 0);
  strict.strictMla = true;
  auto f = runPostsetStage(strict);
  ASSERT_FALSE(f.ok());
  EXPECT_CONTAINS(f.error().message, "ring 0 enters MLA 0 of node 0 twice");
}

}  // namespace
}  // namespace nccom::rings

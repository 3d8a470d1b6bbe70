// Suite NccomRasClient: what the client takes from a health report for a
// failure message — the findings in the report's order, and one line of
// them within a budget that says how many it left to nccom-ras.
#include "client.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nccom::ras {
namespace {

const char* const kReport =
    "Job: 4 processes on 2 hosts\n"
    "\n"
    "Processes not answering:\n"
    "  DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed\n"
    "\n"
    "Waiting:\n"
    "  rank 0 waits for rank 3 on channel 0\n"
    "  rank 1 waits for rank 3 on channel 1\n"
    "\n"
    "Behind:\n"
    "  rank 2 is 3 executions behind\n"
    "\n"
    "Links:\n"
    "  a <-> b up\n";

TEST(NccomRasClient, FindingsAreTheThreeSectionsInOrder) {
  const std::vector<std::string> want = {
      "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed",
      "rank 0 waits for rank 3 on channel 0", "rank 1 waits for rank 3 on channel 1",
      "rank 2 is 3 executions behind"};
  EXPECT_EQ(findings(kReport), want);
  EXPECT_TRUE(findings("Job: 2 processes on 1 host\n\nLinks:\n  a up\n").empty());
}

TEST(NccomRasClient, TheLineKeepsWholeEntriesAndCountsTheRest) {
  const std::vector<std::string> found = findings(kReport);
  EXPECT_EQ(findings_line(found, 1000, "127.0.0.1", "4000"),
            "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed; rank 0 "
            "waits for rank 3 on channel 0; rank 1 waits for rank 3 on channel 1; rank 2 is 3 "
            "executions behind");
  EXPECT_EQ(findings_line(found, 120, "127.0.0.1", "4000"),
            "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed; rank 0 "
            "waits for rank 3 on channel 0; 2 more (nccom-ras -h 127.0.0.1 -p 4000)");
  // The first finding is given whole even beyond the budget.
  EXPECT_EQ(findings_line(found, 10, "h", "1"),
            "DEAD: pid 41 on host a (rank 3 of comm 0xfeed): its health link closed; 3 more "
            "(nccom-ras -h h -p 1)");
  EXPECT_EQ(findings_line({}, 10, "h", "1"), "");
}

}  // namespace
}  // namespace nccom::ras

// Suite ResultContext: an error's context goes after its cause
// (nccom::in_context), innermost first, and the cause stays readable alone.
#include <nccom/util/result.h>

#include <gtest/gtest.h>

#include <string>

namespace nccom {
namespace {

TEST(ResultContext, ContextFollowsTheCauseInnermostFirst) {
  Error e = make_error(NRT_FAILURE, "isend returned ncclSystemError (2)");
  EXPECT_EQ(cause_of(e), e.message);
  e = in_context(std::move(e), "channel 3 send to rank 1");
  EXPECT_EQ(e.message, "isend returned ncclSystemError (2) (channel 3 send to rank 1)");
  e = in_context(std::move(e), "stream 0, basic block 2");
  EXPECT_EQ(e.message,
            "isend returned ncclSystemError (2) (channel 3 send to rank 1; stream 0, basic "
            "block 2)");
  EXPECT_EQ(cause_of(e), "isend returned ncclSystemError (2)");
  EXPECT_EQ(e.status, NRT_FAILURE);
}

TEST(ResultContext, AnEmptyContextAddsNothing) {
  const Error e = in_context(make_error(NRT_INVALID, "bad"), "");
  EXPECT_EQ(e.message, "bad");
  EXPECT_EQ(e.cause_size, 0u);
}

TEST(ResultContext, ACauseWithParenthesesOfItsOwnStaysWhole) {
  // Text from across a plugin boundary: its own parentheses are part of the
  // cause, and the first context is a new parenthesis.
  Error e = in_context(make_error(NRT_FAILURE, "peer closed (descriptor 2) (op 0)"), "send op");
  e = in_context(std::move(e), "stream 1, basic block 5");
  EXPECT_EQ(e.message, "peer closed (descriptor 2) (op 0) (send op; stream 1, basic block 5)");
  EXPECT_EQ(cause_of(e), "peer closed (descriptor 2) (op 0)");
}

}  // namespace
}  // namespace nccom

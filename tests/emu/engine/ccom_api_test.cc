// Suite EngineApi: the collective API of the reference runtime (nrt_emu.h,
// nrt_emu_ccom_*) refusing bad input — a bad config, a NULL handle, device
// memory that is full, a free of something that is not a live allocation,
// every argument rule of nrt_emu_ccom_run — with a message that says what,
// and a communicator that still works afterwards. One rank, in this
// process: the real libnccom is loaded and builds a one-rank graph.
#include <nrt_emu.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

namespace {

constexpr size_t kDeviceBytes = 4u << 20;

nrt_emu_ccom_config_t one_rank() {
  nrt_emu_ccom_config_t cfg{};
  cfg.struct_size = sizeof cfg;
  cfg.rank = 0;
  cfg.rank_n = 1;
  cfg.local_rank = 0;
  cfg.local_n = 1;
  cfg.device_bytes = kDeviceBytes;
  cfg.timeout_ms = 10000;
  return cfg;
}

std::string init_error_of(const nrt_emu_ccom_config_t& cfg) {
  nrt_emu_ccom_t* c = nullptr;
  const NRT_STATUS s = nrt_emu_ccom_init(&cfg, &c);
  if (s == NRT_SUCCESS) {
    nrt_emu_ccom_close(c);
    return "(accepted)";
  }
  EXPECT_EQ(c, nullptr);
  return nrt_emu_ccom_error(nullptr);
}

// The runtime's own lines in its log ("[nrt] LEVEL: ..."), without the
// lines libnccom forwarded to it.
std::string runtime_lines() {
  const int n = nrt_emu_log_snapshot(nullptr, 0);
  std::string all(static_cast<size_t>(n > 0 ? n : 0) + 1, '\0');
  nrt_emu_log_snapshot(all.data(), all.size());
  std::string own;
  std::istringstream lines(all);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("[nrt] ", 0) == 0) own += line + "\n";
  }
  return own;
}

class EngineApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("CCOM_SOCKET_IFNAME", "lo", 1);
    const nrt_emu_ccom_config_t cfg = one_rank();
    ASSERT_EQ(nrt_emu_ccom_init(&cfg, &cc_), NRT_SUCCESS) << nrt_emu_ccom_error(nullptr);
  }
  static void TearDownTestSuite() {
    nrt_emu_ccom_close(cc_);
    cc_ = nullptr;
  }

  // An fp32 all-reduce of `count` elements, in place; the result must be
  // the input (one rank) — proof the communicator still works.
  static void expect_works(size_t count = 1000) {
    void* buf = nullptr;
    ASSERT_EQ(nrt_emu_ccom_alloc(cc_, count * 4, &buf), NRT_SUCCESS) << nrt_emu_ccom_error(cc_);
    auto* f = static_cast<float*>(buf);
    for (size_t i = 0; i < count; ++i) f[i] = static_cast<float>(i % 97) - 48.0f;
    nrt_emu_coll_args_t a{};
    a.coll = NRT_EMU_ALL_REDUCE;
    a.dtype = NRT_EMU_FP32;
    a.op = NRT_EMU_SUM;
    a.count = count;
    a.send = a.recv = buf;
    ASSERT_EQ(nrt_emu_ccom_run(cc_, &a), NRT_SUCCESS) << nrt_emu_ccom_error(cc_);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(f[i], static_cast<float>(i % 97) - 48.0f) << i;
    nrt_emu_ccom_free(cc_, buf);
  }

  static nrt_emu_ccom_t* cc_;
};
nrt_emu_ccom_t* EngineApi::cc_ = nullptr;

TEST_F(EngineApi, BadConfigsAreRefusedWithTheRule) {
  nrt_emu_ccom_config_t cfg = one_rank();
  cfg.struct_size = 8;
  EXPECT_NE(init_error_of(cfg).find("struct_size 8 is not sizeof(nrt_emu_ccom_config_t)"),
            std::string::npos);
  cfg = one_rank();
  cfg.rank = 1;
  EXPECT_NE(init_error_of(cfg).find("rank 1 is outside 0..0"), std::string::npos);
  cfg = one_rank();
  cfg.local_n = 17;
  cfg.local_rank = 0;
  EXPECT_NE(init_error_of(cfg).find("(1..16 per host)"), std::string::npos);
  cfg = one_rank();
  cfg.host = -2;
  EXPECT_NE(init_error_of(cfg).find("host id -2 is negative"), std::string::npos);
  cfg = one_rank();
  cfg.rank_n = 2;
  cfg.root_comm_id = nullptr;
  unsetenv("NEURON_RT_ROOT_COMM_ID");
  EXPECT_NE(init_error_of(cfg).find("no root address: set NEURON_RT_ROOT_COMM_ID"),
            std::string::npos);

  nrt_emu_ccom_t* c = reinterpret_cast<nrt_emu_ccom_t*>(0x1);
  EXPECT_EQ(nrt_emu_ccom_init(nullptr, &c), NRT_INVALID);
  EXPECT_EQ(c, nullptr);
  EXPECT_STREQ(nrt_emu_ccom_error(nullptr), "nrt_emu_ccom_init: cfg is NULL");
  EXPECT_EQ(nrt_emu_ccom_init(&cfg, nullptr), NRT_INVALID);
}

// An error is cause first, "CAUSE (CONTEXT)", and nrt_emu_ccom_cause is
// CAUSE alone: the runtime's own finding, or the reason libnccom forwarded
// to the runtime's log during the call.
TEST_F(EngineApi, ErrorsAreCauseFirstWithTheCauseAlsoAlone) {
  nrt_emu_ccom_config_t cfg = one_rank();
  cfg.struct_size = 8;
  std::string error = init_error_of(cfg);
  std::string cause = nrt_emu_ccom_cause(nullptr);
  EXPECT_EQ(cause.rfind("config struct_size 8 is not sizeof(nrt_emu_ccom_config_t)", 0), 0u)
      << cause;
  EXPECT_EQ(error, cause + " (rank 0 of 1)");
  EXPECT_STREQ(nrt_emu_ccom_context(nullptr), "rank 0 of 1");

  cfg = one_rank();
  cfg.rank = 1;
  cfg.rank_n = 2;
  cfg.root_comm_id = "no-such-host.invalid:notaport";
  error = init_error_of(cfg);
  cause = nrt_emu_ccom_cause(nullptr);
  EXPECT_NE(cause, "") << error;
  EXPECT_EQ(cause.find("returned status"), std::string::npos) << cause;
  EXPECT_EQ(error.rfind(cause + " (rank 1 of 2: neuronInitGlobalComm returned status ", 0), 0u)
      << error;
  EXPECT_EQ(error.find("forwarded no reason"), std::string::npos) << error;
  EXPECT_EQ(error, cause + " (" + nrt_emu_ccom_context(nullptr) + ")");
  // libnccom logged that cause itself: the runtime's own line gives only
  // what the runtime was doing.
  const std::string log = runtime_lines();
  EXPECT_NE(
      log.find("nrt_emu_ccom_init failed (rank 1 of 2: neuronInitGlobalComm returned status "),
      std::string::npos)
      << log;
  EXPECT_EQ(log.find(cause), std::string::npos) << log;

  EXPECT_EQ(nrt_emu_ccom_alloc(cc_, 64, nullptr), NRT_INVALID);
  EXPECT_STREQ(nrt_emu_ccom_error(cc_), "nrt_emu_ccom_alloc: out is NULL");
  EXPECT_STREQ(nrt_emu_ccom_cause(cc_), "nrt_emu_ccom_alloc: out is NULL");
  EXPECT_STREQ(nrt_emu_ccom_context(cc_), "");
  nrt_emu_ccom_t* none = nullptr;
  EXPECT_EQ(nrt_emu_ccom_init(nullptr, &none), NRT_INVALID);
  EXPECT_STREQ(nrt_emu_ccom_cause(nullptr), "nrt_emu_ccom_init: cfg is NULL");
}

TEST_F(EngineApi, NullHandlesAreRefusedNotDereferenced) {
  void* p = nullptr;
  nrt_emu_coll_args_t a{};
  EXPECT_EQ(nrt_emu_ccom_alloc(nullptr, 64, &p), NRT_INVALID);
  EXPECT_EQ(nrt_emu_ccom_run(nullptr, &a), NRT_INVALID);
  EXPECT_EQ(nrt_emu_ccom_run(cc_, nullptr), NRT_INVALID);
  EXPECT_EQ(nrt_emu_ccom_barrier(nullptr), NRT_INVALID);
  EXPECT_EQ(nrt_emu_ccom_rank(nullptr), -1);
  EXPECT_EQ(nrt_emu_ccom_rank_n(nullptr), 0);
  nrt_emu_ccom_free(nullptr, &a);  // no handle: nothing to do
  nrt_emu_ccom_close(nullptr);
  EXPECT_EQ(nrt_emu_ccom_alloc(cc_, 64, nullptr), NRT_INVALID);
  EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find("out is NULL"), std::string::npos);
}

// nrt_emu_ccom_algorithm on one rank: never recursive doubling (nothing to
// exchange), the rings for the ring collectives, peer exchanges for
// all-to-all and permute; buffers are not looked at; bad arguments are
// refused as nrt_emu_ccom_run refuses them. (The recursive-doubling
// threshold is held by NccomTestContext.AlgorithmColumnFlipsAtTheThreshold.)
TEST_F(EngineApi, AlgorithmIsTheEnginesDecision) {
  struct Case {
    int32_t coll;
    const char* algorithm;
  };
  for (const Case& c : {Case{NRT_EMU_ALL_REDUCE, "ring"}, Case{NRT_EMU_ALL_GATHER, "ring"},
                        Case{NRT_EMU_REDUCE_SCATTER, "ring"}, Case{NRT_EMU_BROADCAST, "ring"},
                        Case{NRT_EMU_REDUCE, "ring"}, Case{NRT_EMU_ALL_TO_ALL, "peer"},
                        Case{NRT_EMU_PERMUTE, "peer"}}) {
    for (size_t count : {size_t{1}, size_t{1} << 20}) {
      nrt_emu_coll_args_t a{};
      a.coll = c.coll;
      a.dtype = NRT_EMU_FP32;
      a.count = count;
      const char* name = nullptr;
      ASSERT_EQ(nrt_emu_ccom_algorithm(cc_, &a, &name), NRT_SUCCESS) << nrt_emu_ccom_error(cc_);
      EXPECT_STREQ(name, c.algorithm) << c.coll << " x " << count;
    }
  }
  nrt_emu_coll_args_t a{};
  const char* name = "unset";
  a.coll = 99;
  EXPECT_EQ(nrt_emu_ccom_algorithm(cc_, &a, &name), NRT_INVALID);
  EXPECT_EQ(name, nullptr);
  EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find("unknown collective 99"), std::string::npos);
  a.coll = NRT_EMU_ALL_REDUCE;
  a.dtype = 42;
  EXPECT_EQ(nrt_emu_ccom_algorithm(cc_, &a, &name), NRT_INVALID);
  EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find("unknown data type 42"), std::string::npos);
  EXPECT_EQ(nrt_emu_ccom_algorithm(nullptr, &a, &name), NRT_INVALID);
  EXPECT_EQ(nrt_emu_ccom_algorithm(cc_, nullptr, &name), NRT_INVALID);
  EXPECT_EQ(nrt_emu_ccom_algorithm(cc_, &a, nullptr), NRT_INVALID);
  expect_works();
}

TEST_F(EngineApi, FullDeviceMemoryIsAnErrorThatLosesNothing) {
  void* small = nullptr;
  ASSERT_EQ(nrt_emu_ccom_alloc(cc_, 4096, &small), NRT_SUCCESS);
  std::memset(small, 0x5a, 4096);
  void* huge = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(nrt_emu_ccom_alloc(cc_, kDeviceBytes, &huge), NRT_RESOURCE);
  EXPECT_EQ(huge, nullptr);
  const std::string why = nrt_emu_ccom_error(cc_);
  EXPECT_NE(why.find(std::to_string(kDeviceBytes) + " bytes do not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("raise nrt_emu_ccom_config_t.device_bytes"), std::string::npos) << why;
  EXPECT_EQ(nrt_emu_ccom_alloc(cc_, SIZE_MAX, &huge), NRT_RESOURCE);
  // The live allocation is untouched and the rest of the memory still usable.
  for (size_t i = 0; i < 4096; ++i) ASSERT_EQ(static_cast<unsigned char*>(small)[i], 0x5a) << i;
  expect_works();
  nrt_emu_ccom_free(cc_, small);
  // Everything is free again: the largest block fits once more.
  void* most = nullptr;
  ASSERT_EQ(nrt_emu_ccom_alloc(cc_, kDeviceBytes / 2, &most), NRT_SUCCESS)
      << nrt_emu_ccom_error(cc_);
  nrt_emu_ccom_free(cc_, most);
}

TEST_F(EngineApi, FreeOfSomethingNotAllocatedIsRefusedAndChangesNothing) {
  void* p = nullptr;
  ASSERT_EQ(nrt_emu_ccom_alloc(cc_, 8192, &p), NRT_SUCCESS);
  int on_stack = 0;
  for (void* bad :
       {static_cast<void*>(static_cast<char*>(p) + 64), static_cast<void*>(&on_stack)}) {
    nrt_emu_ccom_free(cc_, bad);
    EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find("nrt_emu_ccom_free: not a live allocation"),
              std::string::npos);
  }
  // p is still live: a collective on it is accepted, and it frees once.
  nrt_emu_coll_args_t a{};
  a.coll = NRT_EMU_ALL_GATHER;
  a.dtype = NRT_EMU_UINT8;
  a.count = 8192;
  a.send = a.recv = p;
  EXPECT_EQ(nrt_emu_ccom_run(cc_, &a), NRT_SUCCESS) << nrt_emu_ccom_error(cc_);
  nrt_emu_ccom_free(cc_, p);
  nrt_emu_ccom_free(cc_, p);  // twice: the second is refused
  EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find("not a live allocation"), std::string::npos);
  // And a buffer that was freed is no longer device memory for a collective.
  EXPECT_EQ(nrt_emu_ccom_run(cc_, &a), NRT_INVALID);
  EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find("is not 8192 bytes of device memory"),
            std::string::npos)
      << nrt_emu_ccom_error(cc_);
  expect_works();
}

struct BadArgs {
  const char* name;
  void (*mutate)(nrt_emu_coll_args_t&, char* base);
  const char* message;
};

TEST_F(EngineApi, EveryArgumentRuleIsCheckedAndTheCommSurvives) {
  void* mem = nullptr;
  ASSERT_EQ(nrt_emu_ccom_alloc(cc_, 1 << 16, &mem), NRT_SUCCESS);
  char* base = static_cast<char*>(mem);
  static char host_buffer[256];
  const BadArgs cases[] = {
      {"collective", [](nrt_emu_coll_args_t& a, char*) { a.coll = 99; }, "unknown collective 99"},
      {"dtype", [](nrt_emu_coll_args_t& a, char*) { a.dtype = -1; }, "unknown data type -1"},
      {"op", [](nrt_emu_coll_args_t& a, char*) { a.op = 7; }, "unknown reduction 7"},
      {"overflow", [](nrt_emu_coll_args_t& a, char*) { a.count = UINT64_MAX / 2; }, "overflows"},
      {"root",
       [](nrt_emu_coll_args_t& a, char*) {
         a.coll = NRT_EMU_BROADCAST;
         a.root = 1;
       },
       "root 1 is outside 0..0"},
      {"permute",
       [](nrt_emu_coll_args_t& a, char*) {
         a.coll = NRT_EMU_PERMUTE;
         a.send_to = 3;
       },
       "send_to 3 / recv_from -1 outside -1..0"},
      {"host memory", [](nrt_emu_coll_args_t& a, char*) { a.send = host_buffer; },
       "the send buffer is not 64 bytes of device memory"},
      {"too long", [](nrt_emu_coll_args_t& a, char* b) { a.recv = b + (1 << 16) - 32; },
       "the receive buffer is not 64 bytes of device memory"},
      {"overlap", [](nrt_emu_coll_args_t& a, char* b) { a.recv = b + 8; },
       "the send and receive buffers overlap without being in place"},
  };
  for (const BadArgs& c : cases) {
    SCOPED_TRACE(c.name);
    nrt_emu_coll_args_t a{};
    a.coll = NRT_EMU_ALL_REDUCE;
    a.dtype = NRT_EMU_INT32;
    a.op = NRT_EMU_SUM;
    a.count = 16;
    a.send = base;
    a.recv = base + 4096;
    a.send_to = a.recv_from = -1;
    c.mutate(a, base);
    EXPECT_EQ(nrt_emu_ccom_run(cc_, &a), NRT_INVALID);
    EXPECT_NE(std::string(nrt_emu_ccom_error(cc_)).find(c.message), std::string::npos)
        << nrt_emu_ccom_error(cc_);
  }
  nrt_emu_ccom_free(cc_, mem);
  expect_works();
}

}  // namespace

// nccom/util/knob_value.h: typed reads of a plugin's knobs through the host
// API — absent and empty take the fallback, anything that is not the type is
// refused and leaves the output alone.
#include <nccom/util/knob_value.h>

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

struct Answers {
  std::map<std::string, std::string> values;
  static const char* get(void* ctx, const char* key) {
    const auto& v = static_cast<Answers*>(ctx)->values;
    auto it = v.find(key);
    return it == v.end() ? nullptr : it->second.c_str();
  }
};

nccom_host_api_t host_of(Answers& answers) {
  nccom_host_api_t host{};
  host.struct_size = sizeof host;
  host.abi_version = NCCOM_PLUGIN_ABI_VERSION;
  host.config_get = &Answers::get;
  host.host_ctx = &answers;
  return host;
}

TEST(SdkKnobValue, IntegersAreDecimalAndWithinInt) {
  Answers a{{{"n", "42"},
             {"neg", "-7"},
             {"empty", ""},
             {"hex", "0x10"},
             {"tail", "3x"},
             {"big", "2147483648"}}};
  const nccom_host_api_t host = host_of(a);
  int out = -1;
  EXPECT_TRUE(nccom::util::knob_int(&host, "n", 5, out));
  EXPECT_EQ(out, 42);
  EXPECT_TRUE(nccom::util::knob_int(&host, "neg", 5, out));
  EXPECT_EQ(out, -7);
  EXPECT_TRUE(nccom::util::knob_int(&host, "absent", 5, out));
  EXPECT_EQ(out, 5);
  out = -1;
  EXPECT_TRUE(nccom::util::knob_int(&host, "empty", 6, out));
  EXPECT_EQ(out, 6);
  for (const char* bad : {"hex", "tail", "big"}) {
    out = -1;
    EXPECT_FALSE(nccom::util::knob_int(&host, bad, 5, out)) << bad;
    EXPECT_EQ(out, -1) << bad;
  }
}

TEST(SdkKnobValue, BooleansAsTheHostWritesThem) {
  Answers a{{{"t", "true"}, {"f", "FALSE"}, {"one", "1"}, {"zero", "0"}, {"yes", "yes"}}};
  const nccom_host_api_t host = host_of(a);
  bool out = false;
  EXPECT_TRUE(nccom::util::knob_bool(&host, "t", false, out));
  EXPECT_TRUE(out);
  EXPECT_TRUE(nccom::util::knob_bool(&host, "f", true, out));
  EXPECT_FALSE(out);
  EXPECT_TRUE(nccom::util::knob_bool(&host, "one", false, out));
  EXPECT_TRUE(out);
  EXPECT_TRUE(nccom::util::knob_bool(&host, "zero", true, out));
  EXPECT_FALSE(out);
  EXPECT_TRUE(nccom::util::knob_bool(&host, "absent", true, out));
  EXPECT_TRUE(out);
  out = false;
  EXPECT_FALSE(nccom::util::knob_bool(&host, "yes", true, out));
  EXPECT_FALSE(out);
}

TEST(SdkKnobValue, NoUsableHostApiMeansEveryFallback) {
  int n = 0;
  EXPECT_TRUE(nccom::util::knob_int(nullptr, "n", 3, n));
  EXPECT_EQ(n, 3);
  Answers a{{{"n", "9"}}};
  nccom_host_api_t old = host_of(a);
  old.struct_size = 8;  // older than this SDK: its config_get is not read
  EXPECT_EQ(nccom::util::knob_text(&old, "n"), nullptr);
  nccom_host_api_t none = host_of(a);
  none.config_get = nullptr;
  EXPECT_EQ(nccom::util::knob_text(&none, "n"), nullptr);
  EXPECT_STREQ(nccom::util::knob_text(&(none = host_of(a)), "n"), "9");
}

}  // namespace

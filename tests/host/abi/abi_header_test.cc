// nccom/nrt_abi.h as C and as C++: both compile, and both see the same
// layouts, which are the original's.
#include "abi_layout_checks.h"

#include <nccom/nrt_abi.h>

#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

namespace {

struct Check {
  const char* expression;
  size_t value;
  size_t expected;
};

std::vector<Check> cxx_checks() {
  std::vector<Check> checks;
#define NCCOM_ABI_FROM_CXX(expr, expected) \
  checks.push_back({#expr, static_cast<size_t>(expr), static_cast<size_t>(expected)});
  NCCOM_ABI_LAYOUT_CHECKS(NCCOM_ABI_FROM_CXX)
#undef NCCOM_ABI_FROM_CXX
  return checks;
}

TEST(AbiHeader, CxxLayoutsMatchTheSpec) {
  for (const Check& c : cxx_checks()) EXPECT_EQ(c.value, c.expected) << c.expression;
}

TEST(AbiHeader, CLayoutsMatchCxx) {
  const std::vector<Check> cxx = cxx_checks();
  std::vector<size_t> c(cxx.size() + 1, 0);
  ASSERT_EQ(nccom_abi_layout_from_c(c.data(), c.size()), cxx.size());
  for (size_t i = 0; i < cxx.size(); ++i) {
    EXPECT_EQ(c[i], cxx[i].value) << "C and C++ disagree on " << cxx[i].expression;
  }
}

TEST(AbiHeader, ExportAndImportListsHaveTheSpecsCounts) {
  constexpr int kExports = 0 NCCOM_FOR_EACH_EXPORT(NCCOM_ABI_COUNT_ONE);
  constexpr int kImports = 0 NCCOM_FOR_EACH_IMPORT(NCCOM_ABI_COUNT_ONE);
  static_assert(kExports == NCCOM_EXPORT_COUNT && kImports == NCCOM_IMPORT_COUNT);
  EXPECT_EQ(nccom_abi_export_count_from_c(), 37);
  EXPECT_EQ(nccom_abi_import_count_from_c(), 20);
}

TEST(AbiHeader, TableSlotsHaveTheExportTypes) {
  EXPECT_EQ(nccom_abi_table_types_from_c(), 1);
#define NCCOM_ABI_SLOT_TYPE(name) \
  static_assert(std::is_same_v<decltype(nccom_export_table_t::name), decltype(&::name)>, #name);
  NCCOM_FOR_EACH_EXPORT(NCCOM_ABI_SLOT_TYPE)
#undef NCCOM_ABI_SLOT_TYPE
}

}  // namespace

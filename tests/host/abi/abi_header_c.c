/* The boundary header compiled as strict C11 (-std=c11 -pedantic-errors):
 * it must build without GNU extensions (so cpu_set_t is the opaque type) and
 * agree with the C++ view of every layout. */
#include "abi_layout_checks.h"

#include <nccom/nrt_abi.h>

size_t nccom_abi_layout_from_c(size_t* values, size_t cap) {
  size_t n = 0;
#define NCCOM_ABI_FROM_C(expr, expected)   \
  if (n < cap) values[n] = (size_t)(expr); \
  ++n;
  NCCOM_ABI_LAYOUT_CHECKS(NCCOM_ABI_FROM_C)
#undef NCCOM_ABI_FROM_C
  return n;
}

int nccom_abi_export_count_from_c(void) { return 0 NCCOM_FOR_EACH_EXPORT(NCCOM_ABI_COUNT_ONE); }

int nccom_abi_import_count_from_c(void) { return 0 NCCOM_FOR_EACH_IMPORT(NCCOM_ABI_COUNT_ONE); }

int nccom_abi_table_types_from_c(void) {
  nccom_export_table_t table = {0};
  int ok = 1;
  ok &= _Generic(table.neuronGetVersionInfo,
      NRT_STATUS(*)(nec_version_info_t*, size_t): 1,
      default: 0);
  ok &= _Generic(table.neuronNetworkProxyProgress,
      NRT_STATUS(*)(void*, uint32_t, uint32_t, bool*, bool*): 1,
      default: 0);
  ok &= _Generic(table.neuronSetAffinity,
      NRT_STATUS(*)(void*, nccom_cpu_set_t*, nccom_cpu_set_t*, int): 1,
      default: 0);
  ok &= _Generic(table.neuronNetCloseListen, NRT_STATUS(*)(void*): 1, default: 0);
  return ok;
}

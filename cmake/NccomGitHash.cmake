# Generates ${PROJECT_BINARY_DIR}/generated/nccom_build_id.c at build time, so
# the git hash neuronGetVersionInfo reports is never stale. The file is only
# rewritten when its content changes.
set(NCCOM_BUILD_ID_C ${PROJECT_BINARY_DIR}/generated/nccom_build_id.c)
add_custom_target(nccom_build_id
  COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DOUT=${NCCOM_BUILD_ID_C}
          -DVERSION=${NCCOM_PACKAGE_VERSION} -P ${PROJECT_SOURCE_DIR}/cmake/WriteBuildId.cmake
  BYPRODUCTS ${NCCOM_BUILD_ID_C}
  COMMENT "nccom build id")

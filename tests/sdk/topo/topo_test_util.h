// Shared by the topology core tests: loading the hand-written fixtures.
#pragma once

#include "build_paths.h"

#include <nccom/topo/paths.h>
#include <nccom/topo/system.h>
#include <nccom/topo/xml.h>

#include <gtest/gtest.h>

#include <string>

namespace nccom::topo::test {

inline std::string dataPath(const std::string& name) {
  return std::string(TOPO_TEST_DATA_DIR) + "/" + name;
}

// Parses XML text that the test expects to be valid; fails the test otherwise.
inline XmlDocument mustParse(std::string_view text) {
  auto doc = parseXml(text);
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  return doc.ok() ? std::move(*doc) : XmlDocument{};
}

inline TopoSystem mustBuild(std::string_view text, const SystemOptions& options = {}) {
  auto doc = parseXml(text);
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  if (!doc.ok()) return {};
  auto sys = buildSystem(*doc, options);
  EXPECT_TRUE(sys.ok()) << (sys.ok() ? "" : sys.error().message);
  return sys.ok() ? std::move(*sys) : TopoSystem{};
}

// tests/sdk/topo/data/pcie_host.xml, built and with paths computed.
inline TopoSystem pcieHost(const PathSettings& settings = {}) {
  auto doc = parseXmlFile(dataPath("pcie_host.xml"));
  EXPECT_TRUE(doc.ok()) << (doc.ok() ? "" : doc.error().message);
  if (!doc.ok()) return {};
  auto sys = buildSystem(*doc);
  EXPECT_TRUE(sys.ok()) << (sys.ok() ? "" : sys.error().message);
  if (!sys.ok()) return {};
  auto st = computePaths(*sys, settings);
  EXPECT_TRUE(st.ok()) << (st.ok() ? "" : st.error().message);
  return std::move(*sys);
}

// The error message of a failed result ("" and a test failure if it succeeded).
template <class R>
std::string errorOf(const R& r) {
  EXPECT_FALSE(r.ok()) << "expected an error";
  return r.ok() ? std::string() : r.error().message;
}

inline ::testing::AssertionResult contains(const std::string& haystack, const std::string& needle) {
  if (haystack.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "'" << haystack << "' does not contain '" << needle << "'";
}

}  // namespace nccom::topo::test

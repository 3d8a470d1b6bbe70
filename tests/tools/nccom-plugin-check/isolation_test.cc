// PluginCheckIsolation: nccom-plugin-check survives the plugin it checks.
// Every check runs in a process of its own, so a crash or a hang of the
// third-party test plugin (TPN_BEHAVIOUR devices_null_crash, test_null_hang,
// hang_connect) fails that check only — its row names the signal or the
// plugin call that did not return, and how long it ran — while the checks
// before and after it still report. Rows stream as checks end, --json is
// complete, the exit status is the one the manual and --help give, and no
// process of the tool is left behind, even when it is interrupted.
#include "build_paths.h"
#include "child_process.h"

#include <signal.h>

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using nccom_test::ChildResult;

const std::string kTool = PLUGIN_CHECK_TOOL;
const std::string kV4 = PLUGIN_CHECK_TPN_V4;
const std::string kV5 = PLUGIN_CHECK_TPN_V5;
constexpr const char* kMarkName = "PLUGIN_CHECK_TEST_MARK";

std::string output(const ChildResult& r) {
  return "exit " + std::to_string(r.exit_code) + ", signal " + std::to_string(r.signal) +
         "\n--- stdout ---\n" + r.out + "--- stderr ---\n" + r.err;
}

// A value no other process carries in its environment: every process of one
// run of the tool (its checks' processes, their peers) inherits it.
std::string unique_mark() {
  static int counter = 0;
  return std::to_string(getpid()) + "-" + std::to_string(++counter);
}

// The processes whose environment holds kMarkName=mark (zombies have none).
std::vector<int> marked(const std::string& mark) {
  const std::string wanted = std::string(kMarkName) + "=" + mark;
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    std::ifstream in(entry.path() / "environ", std::ios::binary);
    const std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t start = 0;
    while (start < env.size()) {
      const std::size_t end = std::min(env.find('\0', start), env.size());
      if (env.compare(start, end - start, wanted) == 0) pids.push_back(std::stoi(name));
      start = end + 1;
    }
  }
  return pids;
}

std::map<std::string, std::string> env_of(const std::string& behaviour, const std::string& mark) {
  return {{"TPN_BEHAVIOUR", behaviour}, {kMarkName, mark}};
}

// The table row of `check` ("" when there is none).
std::string row(const std::string& out, const std::string& check) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first, result;
    if (words >> first >> result && first == check &&
        (result == "PASS" || result == "FAIL" || result == "SKIP")) {
      return line;
    }
  }
  return "";
}

std::string result_of(const std::string& out, const std::string& check) {
  std::istringstream words(row(out, check));
  std::string name, result;
  words >> name >> result;
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A crash in the last group's first check fails it alone: every check
// before it and after it reports, and the summary says the plugin can still
// carry collectives. No process of the run is left.
//
// A sanitizer build's SEGV handler turns the plugin's crash into exit status
// 1 after its own report, so there the row says the plugin ended the process.
#if defined(__SANITIZE_ADDRESS__)
const std::string kCrashed =
    "crashed: its process exited with status 1 before the check ended (the plugin ended it)";
#else
const std::string kCrashed = "crashed: signal SEGV (Segmentation fault)";
#endif

TEST(PluginCheckIsolation, ACrashFailsOnlyItsCheck) {
  const std::string mark = unique_mark();
  const ChildResult r =
      nccom_test::run_child(kTool, {"--timeout", "20", kV4}, env_of("devices_null_crash", mark));
  EXPECT_EQ(r.signal, 0) << output(r);
  EXPECT_EQ(r.exit_code, 4) << output(r);
  const std::string crashed = row(r.out, "null-args");
  EXPECT_TRUE(contains(crashed, "FAIL")) << output(r);
  EXPECT_TRUE(contains(
      crashed, kCrashed + " inside the plugin's devices, during \"null-args: devices(NULL)\", "))
      << output(r);
  EXPECT_TRUE(contains(crashed, " ms into the check")) << output(r);
  for (const char* before : {"bind", "init", "devices", "connect-then-accept", "sizes", "close"})
    EXPECT_EQ(result_of(r.out, before), "PASS") << before << "\n" << output(r);
  for (const char* after : {"garbage-handle", "recv-too-small"})
    EXPECT_EQ(result_of(r.out, after), "PASS") << after << "\n" << output(r);
  EXPECT_TRUE(contains(r.out,
                       "\n14 passed, 1 failed (1 crashed), 4 skipped: the plugin does NOT conform, "
                       "but it can carry collectives: only robustness checks failed (null-args)\n"))
      << output(r);
  // The checks collectives need come first, under their heading.
  EXPECT_LT(r.out.find("-- what collectives need"), r.out.find("\nbind "));
  EXPECT_LT(r.out.find("\nfini "), r.out.find("-- robustness"));
  EXPECT_LT(r.out.find("-- robustness"), r.out.find("\nnull-args "));
  EXPECT_TRUE(marked(mark).empty()) << "processes of the run are left";
}

// A plugin call that never returns fails its check once the bound has
// passed (--timeout 1: 1 s + 5 s) and the check's process is killed; the
// check before it (a request never done: an ordinary failure) and the one
// after it report. Exit 3: a hang outranks a failure.
TEST(PluginCheckIsolation, AHangFailsOnlyItsCheckWithinTheBound) {
  const std::string mark = unique_mark();
  const ChildResult r = nccom_test::run_child(
      kTool, {"--timeout", "1", "--only", "sizes,null-args,garbage-handle", kV5},
      env_of("never_complete,test_null_hang", mark));
  EXPECT_EQ(r.exit_code, 3) << output(r);
  EXPECT_TRUE(contains(row(r.out, "sizes"), "FAIL")) << output(r);
  EXPECT_TRUE(contains(row(r.out, "sizes"), "never done")) << output(r);
  const std::string hung = row(r.out, "null-args");
  EXPECT_TRUE(contains(hung, "FAIL")) << output(r);
  EXPECT_TRUE(contains(hung,
                       "hung: the plugin's test did not return within 6 s (the bound: "
                       "--timeout plus the larger of half of it and 5 s), during "
                       "\"null-args: test(NULL request)\"; its process was killed "))
      << output(r);
  EXPECT_EQ(result_of(r.out, "garbage-handle"), "PASS") << output(r);
  EXPECT_EQ(result_of(r.out, "accept-then-connect"), "PASS") << output(r);
  EXPECT_TRUE(contains(r.out,
                       "2 failed (1 hung), 0 skipped: the plugin does NOT conform and cannot "
                       "carry collectives (failed: sizes)"))
      << output(r);
  EXPECT_TRUE(marked(mark).empty()) << "processes of the run are left";
}

// --json prints one complete document at the end, with how each check
// ended; what the plugin prints goes to stderr. Exit 4: a crash outranks a
// hang.
TEST(PluginCheckIsolation, TheJsonDocumentIsCompleteWhenChecksCrashAndHang) {
  const std::string mark = unique_mark();
  const ChildResult r = nccom_test::run_child(
      kTool, {"--json", "--timeout", "1", "--only", "null-args,garbage-handle", kV5},
      env_of("devices_null_crash,hang_connect", mark));
  EXPECT_EQ(r.exit_code, 4) << output(r);
  ASSERT_FALSE(r.out.empty()) << output(r);
  EXPECT_EQ(r.out.front(), '{') << output(r);
  EXPECT_TRUE(contains(r.out, "\n}\n") && r.out.rfind("\n}\n") == r.out.size() - 3) << output(r);
  EXPECT_TRUE(contains(r.out, "{\"name\": \"null-args\", \"result\": \"FAIL\", \"milliseconds\": "))
      << output(r);
  EXPECT_TRUE(contains(
      r.out, "\"group\": \"robustness\", \"ending\": \"crashed\", \"detail\": \"" + kCrashed))
      << output(r);
  EXPECT_TRUE(contains(r.out,
                       "\"ending\": \"hung\", \"detail\": \"hung: the plugin's connect did "
                       "not return within 6 s"))
      << output(r);
  EXPECT_TRUE(contains(r.out, "\"name\": \"devices\", \"result\": \"PASS\"")) << output(r);
  for (const char* field : {"\"crashed\": 1,", "\"hung\": 1,", "\"carries_collectives\": null,",
                            "\"exit_status\": 4,", "\"conforms\": false"}) {
    EXPECT_TRUE(contains(r.out, field)) << field << "\n" << output(r);
  }
  EXPECT_TRUE(marked(mark).empty()) << "processes of the run are left";
}

// Rows are printed as their checks end: they are read while a later check
// still runs (its connect stuck in the peer process for up to 30 s). SIGTERM
// then ends the tool, which first ends that check's processes — its own and
// the peer's — and then dies of the signal.
TEST(PluginCheckIsolation, RowsStreamAndAnInterruptLeavesNoProcess) {
  const std::string mark = unique_mark();
  nccom_test::RunningChild child = nccom_test::start_child(
      kTool, {"--two-process", "--timeout", "30", "--only", "accept-then-connect", kV5},
      env_of("hang_connect", mark));
  std::string line;
  bool peer_row = false;
  while (!peer_row) {
    line = nccom_test::read_line(child, std::chrono::seconds(60));  // bounds a hang only
    if (line.empty() && child.out.size() == child.consumed) break;  // EOF or no line in time
    peer_row = line.rfind("peer ", 0) == 0;
  }
  EXPECT_TRUE(peer_row) << child.out;
  EXPECT_TRUE(contains(line, "PASS")) << line;
  // The accept-then-connect check's process and its peer process.
  std::vector<int> others;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (peer_row && std::chrono::steady_clock::now() < give_up) {
    others.clear();
    for (int pid : marked(mark)) {
      if (pid != child.pid) others.push_back(pid);
    }
    if (others.size() >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GE(others.size(), 2u) << child.out;
  kill(child.pid, SIGTERM);
  const ChildResult r = nccom_test::finish_child(child);
  EXPECT_EQ(r.signal, SIGTERM) << output(r);
  EXPECT_EQ(row(r.out, "accept-then-connect"), "") << output(r);
  EXPECT_TRUE(marked(mark).empty()) << "processes of the run are left";
}

// The exit status --help and the manual give, one statement per status,
// word for word; 3 is AHangFailsOnlyItsCheckWithinTheBound's.
TEST(PluginCheckIsolation, ExitStatusIsTheManuals) {
  const ChildResult help = nccom_test::run_child(kTool, {"--help"}, {});
  EXPECT_EQ(help.exit_code, 0) << output(help);
  std::ifstream manual_file(std::string(NCCOM_SOURCE_DIR) + "/docs/tools/nccom-plugin-check.md");
  const std::string raw((std::istreambuf_iterator<char>(manual_file)),
                        std::istreambuf_iterator<char>());
  auto normal = [](const std::string& text) {  // words only, single spaces
    std::string out;
    for (const char c : text) {
      if (c == '`' || c == '*') continue;
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!out.empty() && out.back() != ' ') out += ' ';
      } else {
        out += c;
      }
    }
    return out;
  };
  const std::string manual = normal(raw);
  // --help: "  N  text" and continuation lines indented by five spaces.
  std::map<int, std::string> statuses;
  std::istringstream lines(help.out.substr(help.out.find("Exit status:")));
  std::string line;
  int current = -1;
  while (std::getline(lines, line)) {
    if (line.size() > 4 && line.compare(0, 2, "  ") == 0 && std::isdigit(line[2])) {
      current = line[2] - '0';
      statuses[current] = line.substr(5);
    } else if (current >= 0 && line.compare(0, 5, "     ") == 0) {
      statuses[current] += " " + line.substr(5);
    }
  }
  ASSERT_EQ(statuses.size(), 5u) << help.out;
  for (const auto& [status, text] : statuses) {
    EXPECT_TRUE(contains(manual, std::to_string(status) + " " + normal(text)))
        << "the manual lacks: " << status << " " << text;
  }

  const std::string mark = unique_mark();
  auto run = [&](const std::string& behaviour, std::vector<std::string> args) {
    args.push_back(kV5);
    return nccom_test::run_child(kTool, args, env_of(behaviour, mark));
  };
  const ChildResult passes = run("", {"--only", "null-args"});
  EXPECT_EQ(passes.exit_code, 0) << output(passes);
  const ChildResult fails = run("init_fails", {});
  EXPECT_EQ(fails.exit_code, 1) << output(fails);
  EXPECT_TRUE(contains(fails.out,
                       "the plugin does NOT conform and cannot carry collectives "
                       "(failed: init)"))
      << output(fails);
  const ChildResult usage = run("", {"--only", "no-such-check"});
  EXPECT_EQ(usage.exit_code, 2) << output(usage);
  const ChildResult crashes = run("devices_null_crash", {"--only", "null-args"});
  EXPECT_EQ(crashes.exit_code, 4) << output(crashes);
  EXPECT_TRUE(marked(mark).empty()) << "processes of the runs are left";
}

}  // namespace

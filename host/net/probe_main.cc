// nccom-net-probe: the child of net::probe_discovery (probe.h). It binds the
// plugin in the given layout, says on file descriptor 3 which discovery call
// it is about to make, makes it, and says "done" at the end; a crash, an exit
// or a hang is read by the parent from where the report stops.
//
//   nccom-net-probe neuron|nvidia FILE
//
// It links only the binding and adapters of the host's net layer, not
// libnccom or the runtime: a probe must not start anything but the plugin.
#include "net/bind.h"
#include "net/plugin_answers.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

namespace nccom::net {
namespace {

constexpr int kReportFd = 3;  // the probe's channel to its parent (probe.cc)

void say(const std::string& line) {
  const std::string text = line + "\n";
  ssize_t n;
  do {
    n = write(kReportFd, text.data(), text.size());
  } while (n < 0 && errno == EINTR);
}

// The plugin's log lines are not wanted from a probe: the real init logs them.
void quiet_logger(ncclDebugLogLevel, unsigned long, const char*, int, const char*, ...) {}

int probe_main(int argc, char** argv) {
  if (argc != 3) return 2;
  const Layout layout = std::strcmp(argv[1], "nvidia") == 0 ? Layout::kNvidia : Layout::kNeuron;
  auto bound = open_and_bind(argv[2], layout, {}, argv[2]);
  if (!bound) {
    say("unbound " + bound.error().message);
    return 3;
  }
  Net& net = **bound;
  // A call that fails is the host's to report, in its own words: the probe
  // only looks for calls that do not come back.
  say("call init");
  if (net.init(quiet_logger) == ncclSuccess) {
    say("call devices");
    int n = 0;
    if (net.devices(&n) == ncclSuccess) {
      for (int dev = 0; dev < std::min(n, kMaxNetDevices); ++dev) {
        say("call getProperties " + std::to_string(dev));
        ncclNetProperties_v6_t props{};
        if (net.get_properties(dev, &props) == ncclSuccess) {
          (void)readable_text(props.name, kMaxNetNameBytes);
          (void)readable_text(props.pciPath, kMaxNetPathBytes);
        }
      }
    }
  }
  say("done");
  // No destructors, no exit handlers of the plugin: the probe is over.
  _exit(0);
}

}  // namespace
}  // namespace nccom::net

int main(int argc, char** argv) { return nccom::net::probe_main(argc, argv); }

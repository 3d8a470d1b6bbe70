/* Not a plugin: a library whose constructor takes SIGTERM and SIGSEGV with
 * handlers that exit, as libfabric's libinfinipath does when it is loaded.
 * PluginSharedLibrary.ALoadKeepsTheProcessSignalDispositions loads it. */
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void exit_from_handler(int sig) { _exit(128 + sig); }

__attribute__((constructor)) static void take_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = exit_from_handler;
  (void)sigaction(SIGTERM, &sa, NULL);
  (void)sigaction(SIGSEGV, &sa, NULL);
}

/* Something to look up, so the test can tell the library really loaded. */
__attribute__((visibility("default"))) int nccom_test_signal_handler_loaded = 1;

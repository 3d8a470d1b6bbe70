/* State a well-behaved test plugin exports as `test_plugin_state`, so the
 * tests can see what the host did to it (read via SharedLibrary::symbol). */
#ifndef NCCOM_TEST_PLUGIN_STATE_H
#define NCCOM_TEST_PLUGIN_STATE_H

#include <nccom/plugin.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct test_plugin_state {
  int init_calls;
  int fini_calls;
  const nccom_host_api_t* host; /* what init received */
  const char* greeting;         /* config_get(host_ctx, "greeting") at init */
  void* fini_ctx;               /* what fini received */
  /* Set by a test; called from inside fini while the library is loaded. */
  void (*on_fini)(void* arg);
  void* on_fini_arg;
} test_plugin_state_t;

#define TEST_PLUGIN_STATE_SYMBOL "test_plugin_state"

#ifdef __cplusplus
}
#endif

#endif

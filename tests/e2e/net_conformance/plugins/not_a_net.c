/* A shared object that is no net plugin: it exports a function, no table. */
#include <nccom/plugin.h>

NCCOM_PLUGIN_EXPORT int not_a_net_plugin(void) { return 42; }

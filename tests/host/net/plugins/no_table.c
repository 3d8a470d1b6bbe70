/* A shared object that is not a net plugin: it exports no ncclNetPlugin_*. */
__attribute__((visibility("default"))) int net_host_not_a_plugin(void) { return 42; }

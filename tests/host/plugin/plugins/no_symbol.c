/* A valid shared object that is not an nccom plugin: no nccom_plugin symbol. */
__attribute__((visibility("default"))) int not_a_plugin_answer(void) { return 42; }

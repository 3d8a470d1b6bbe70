/* A stand-in libnccom-net.so for the loader tests: the runtime only dlopens
 * it and hands the handle on, so one marker symbol is all it needs. */
__attribute__((visibility("default"))) const char nccom_emu_dummy_net_marker[] =
    "nccom emu dummy libnccom-net.so";

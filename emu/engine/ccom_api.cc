// The collective API of the reference runtime (nrt_emu_ccom_*, nrt_emu.h).
#include "ccom.h"

#include <nrt_emu.h>

#include <new>
#include <string>

struct nrt_emu_ccom {
  nrt_emu::engine::Ccom* impl;
};

namespace {
// Why this thread's last nrt_emu_ccom_init failed (no handle to hold it),
// and that reason split into its innermost cause and its context.
thread_local std::string init_error;
thread_local nrt_emu::engine::Why init_why;
}  // namespace

extern "C" {

NRT_STATUS nrt_emu_ccom_init(const nrt_emu_ccom_config_t* cfg, nrt_emu_ccom_t** out) {
  if (out == nullptr) return NRT_INVALID;
  *out = nullptr;
  if (cfg == nullptr) {
    init_error = "nrt_emu_ccom_init: cfg is NULL";
    init_why = {init_error, ""};
    return NRT_INVALID;
  }
  nrt_emu::engine::begin_call();
  init_error.clear();
  init_why = {};
  auto created = nrt_emu::engine::Ccom::create(*cfg, &init_why);
  if (!created) {
    init_error = created.error().message;
    return created.error().status;
  }
  nrt_emu::engine::Ccom* c = *created;
  *out = new (std::nothrow) nrt_emu_ccom{c};
  if (*out == nullptr) {
    delete c;
    init_error = "out of memory";
    init_why = {init_error, ""};
    return NRT_RESOURCE;
  }
  return NRT_SUCCESS;
}

void nrt_emu_ccom_close(nrt_emu_ccom_t* c) {
  if (c == nullptr) return;
  delete c->impl;
  delete c;
}

const char* nrt_emu_ccom_error(const nrt_emu_ccom_t* c) {
  return c == nullptr ? init_error.c_str() : c->impl->error().c_str();
}

const char* nrt_emu_ccom_cause(const nrt_emu_ccom_t* c) {
  return c == nullptr ? init_why.cause.c_str() : c->impl->cause().c_str();
}

const char* nrt_emu_ccom_context(const nrt_emu_ccom_t* c) {
  return c == nullptr ? init_why.context.c_str() : c->impl->context().c_str();
}

int nrt_emu_ccom_rank(const nrt_emu_ccom_t* c) { return c ? c->impl->rank() : -1; }
int nrt_emu_ccom_rank_n(const nrt_emu_ccom_t* c) { return c ? c->impl->rank_n() : 0; }
int nrt_emu_ccom_channel_n(const nrt_emu_ccom_t* c) { return c ? c->impl->channel_n() : 0; }

NRT_STATUS nrt_emu_ccom_alloc(nrt_emu_ccom_t* c, size_t bytes, void** out) {
  if (c == nullptr) return NRT_INVALID;
  return c->impl->alloc(bytes, out);
}

void nrt_emu_ccom_free(nrt_emu_ccom_t* c, void* p) {
  if (c != nullptr) c->impl->free(p);
}

NRT_STATUS nrt_emu_ccom_run(nrt_emu_ccom_t* c, const nrt_emu_coll_args_t* a) {
  if (c == nullptr || a == nullptr) return NRT_INVALID;
  nrt_emu::engine::begin_call();
  return c->impl->run(*a);
}

NRT_STATUS nrt_emu_ccom_algorithm(nrt_emu_ccom_t* c, const nrt_emu_coll_args_t* a,
                                  const char** name) {
  if (c == nullptr || a == nullptr || name == nullptr) return NRT_INVALID;
  *name = nullptr;
  nrt_emu::engine::Algorithm algorithm{};
  const NRT_STATUS s = c->impl->algorithm(*a, &algorithm);
  if (s == NRT_SUCCESS) *name = nrt_emu::engine::algorithm_name(algorithm);
  return s;
}

NRT_STATUS nrt_emu_ccom_barrier(nrt_emu_ccom_t* c) {
  if (c == nullptr) return NRT_INVALID;
  nrt_emu::engine::begin_call();
  return c->impl->barrier();
}

}  // extern "C"

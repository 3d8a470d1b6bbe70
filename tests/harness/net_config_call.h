// Calls an ncclNet plugin's nccomNetConfig (nccom/net_config.h) the way the
// host does — configure() with a host API whose config_get answers a fixed
// set of keys — so plugin tests can set the values a host would hand over.
// The host API has no logger: the plugin keeps the test's logger.
#pragma once

#include <nccom/net_common.h>
#include <nccom/net_config.h>

#include <dlfcn.h>

#include <map>
#include <string>

namespace nccom_test {

class NetConfigCall {
 public:
  // `library` is the plugin's dlopen handle; valid() is false when it does
  // not export nccomNetConfig.
  explicit NetConfigCall(void* library)
      : decl_(library == nullptr ? nullptr
                                 : static_cast<const nccom_net_config_t*>(
                                       dlsym(library, NCCOM_NET_CONFIG_SYMBOL))) {}

  bool valid() const { return decl_ != nullptr && decl_->configure != nullptr; }
  const nccom_net_config_t* decl() const { return decl_; }

  // configure() with exactly `values` answered (every other key: NULL).
  // ncclSuccess when the plugin took them, ncclInvalidArgument otherwise;
  // why() then holds the plugin's reason.
  ncclResult_t operator()(const std::map<std::string, std::string>& values) const {
    Answers answers{values};
    nccom_host_api_t api{};
    api.struct_size = sizeof api;
    api.abi_version = NCCOM_PLUGIN_ABI_VERSION;
    api.log = nullptr;
    api.config_get = &Answers::get;
    api.host_ctx = &answers;
    char why[512] = {};
    const nccom_plugin_status_t status = decl_->configure(&api, why, sizeof why);
    why[sizeof why - 1] = '\0';
    why_ = why;
    return status == NCCOM_PLUGIN_OK ? ncclSuccess : ncclInvalidArgument;
  }
  const std::string& why() const { return why_; }

 private:
  struct Answers {
    std::map<std::string, std::string> values;
    static const char* get(void* ctx, const char* key) {
      const auto& v = static_cast<Answers*>(ctx)->values;
      auto it = v.find(key);
      return it == v.end() ? nullptr : it->second.c_str();
    }
  };
  const nccom_net_config_t* decl_;
  mutable std::string why_;
};

}  // namespace nccom_test

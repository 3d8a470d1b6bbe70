#include "net/net_config.h"

#include "config/plugin_knobs.h"
#include "core/host_api.h"
#include "log/log.h"

#include <nccom/nrt_abi.h>

#include <cstring>
#include <memory>

namespace nccom::net {
namespace {

constexpr std::size_t kWhySize = 512;

std::string values_text(const config::PluginSection& section) {
  std::string out;
  for (const config::Entry& e : section.entries())
    out += (out.empty() ? "" : ", ") + std::string(e.key()) + " = " + e.text() + " (from " +
           e.source.to_string() + ")";
  return out.empty() ? std::string("no knobs") : out;
}

}  // namespace

Result<const nccom_net_config_t*> read_net_config(const void* symbol, const std::string& who) {
  const auto* decl = static_cast<const nccom_net_config_t*>(symbol);
  const std::string head = who + ": its " + NCCOM_NET_CONFIG_SYMBOL + " ";
  if (decl->struct_size < sizeof(nccom_net_config_t))
    return make_error(NRT_INVALID, head + "has struct_size " + std::to_string(decl->struct_size) +
                                       ", smaller than nccom_net_config_t (" +
                                       std::to_string(sizeof(nccom_net_config_t)) +
                                       "); rebuild the plugin against the nccom SDK");
  if (decl->abi_version != NCCOM_NET_CONFIG_ABI_VERSION)
    return make_error(NRT_INVALID, head + "has abi_version " + std::to_string(decl->abi_version) +
                                       ", this host supports " +
                                       std::to_string(NCCOM_NET_CONFIG_ABI_VERSION));
  if (decl->name == nullptr || strnlen(decl->name, NCCOM_KNOB_MAX_NAME + 1) > NCCOM_KNOB_MAX_NAME ||
      !config::valid_plugin_section_name(decl->name))
    return make_error(NRT_INVALID,
                      head +
                          "has no usable name: it must name a [plugins.<name>] section "
                          "(lower-case [a-z][a-z0-9_]*, at most " +
                          std::to_string(NCCOM_KNOB_MAX_NAME) + " bytes)");
  return decl;
}

Status configure_net(Net& net, const config::Config& config) {
  const void* symbol = net.symbol(NCCOM_NET_CONFIG_SYMBOL);
  if (symbol == nullptr) return {};
  const std::string who = "NET/Plugin: " + describe(net.info()) + " from " + net.info().origin;
  auto decl = read_net_config(symbol, who);
  if (!decl) return decl.take_error();
  const nccom_net_config_t& d = *decl.value();
  auto section = config::PluginSection::bind(config, d.name, who, d.knobs);
  if (!section) return section.take_error();
  const std::string values = values_text(section.value());
  auto host = std::make_shared<core::PluginHostApi>(config, std::move(section).value());
  if (d.configure != nullptr) {
    char why[kWhySize] = {};
    const nccom_plugin_status_t status = d.configure(&host->api(), why, sizeof why);
    why[sizeof why - 1] = '\0';
    if (status != NCCOM_PLUGIN_OK) {
      const std::string reason = why[0] != '\0' ? why : "no reason given";
      return make_error(NRT_INVALID, who + " refused its settings in configure (status " +
                                         std::to_string(status) + "): " + reason +
                                         "; settings: " + values);
    }
  }
  // The plugin may keep the host API (its logger, its strings) until unloaded.
  net.keep_alive(host);
  NCCOM_INFO(log::kNet | log::kInit, "%s configured through %s: %s", who.c_str(),
             NCCOM_NET_CONFIG_SYMBOL, values.c_str());
  return {};
}

}  // namespace nccom::net

#include "core/context.h"

#include "core/host_api.h"
#include "core/runtime.h"
#include "log/log.h"

#include <dlfcn.h>

#include <cctype>
#include <sstream>

namespace nccom::core {
namespace {

// WARN lines also go to the driver log (nec_ndl_printk; action 0 = append,
// see docs/decisions.md).
void forward_to_runtime(const char* line, std::size_t length) {
  runtime::api().nec_ndl_printk(const_cast<char*>(line), static_cast<uint32_t>(length), 0);
}

const char* section_of(nccom_plugin_kind_t kind) {
  switch (kind) {
    case NCCOM_PLUGIN_KIND_NET: return "net";
    case NCCOM_PLUGIN_KIND_TRANSPORT: return "transport";
    case NCCOM_PLUGIN_KIND_TOPOLOGY: return "topology";
  }
  return "plugins";
}

std::vector<std::filesystem::path> plugin_search_dirs(
    const config::Config& config, const std::filesystem::path& installed_plugins) {
  std::vector<std::filesystem::path> dirs;
  std::stringstream list(config.get_string("plugins.search_path"));
  for (std::string dir; std::getline(list, dir, ':');) {
    if (!dir.empty()) dirs.emplace_back(dir);
  }
  dirs.push_back(installed_plugins.empty() ? own_directory() / "nccom" : installed_plugins);
  return dirs;
}

// The path a configuration problem starts with ("FILE:LINE:COL: ..."), or "".
std::string problem_file(const std::string& problem) {
  for (std::size_t colon = problem.find(':'); colon != std::string::npos;
       colon = problem.find(':', colon + 1)) {
    std::size_t i = colon + 1;
    const std::size_t line_start = i;
    while (i < problem.size() && std::isdigit(static_cast<unsigned char>(problem[i]))) ++i;
    if (i == line_start || i >= problem.size() || problem[i] != ':') continue;
    const std::size_t column_start = ++i;
    while (i < problem.size() && std::isdigit(static_cast<unsigned char>(problem[i]))) ++i;
    if (i > column_start && problem.compare(i, 2, ": ") == 0) return problem.substr(0, colon);
  }
  return "";
}

}  // namespace

std::string invalid_configuration(const std::string& problems) {
  const std::size_t end = problems.find('\n');
  std::string text = problems.substr(0, end);
  std::size_t more = 0;
  for (std::size_t at = end; at != std::string::npos; at = problems.find('\n', at + 1)) {
    if (at + 1 < problems.size() && problems[at + 1] != '\n') ++more;
  }
  text += " (";
  if (more > 0) {
    const std::string file = problem_file(text);
    text += "and " + std::to_string(more) + (more == 1 ? " more problem: " : " more problems: ") +
            (file.empty() ? "nccom-config" : "nccom-config --check " + file) + " lists them all; ";
  }
  return text + "nccom configuration is invalid: fix it, or point NCCOM_CONFIG at a good file)";
}

std::filesystem::path own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  auto path = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : path.parent_path();
}

config::LoadOptions default_load_options(const std::filesystem::path& dir) {
  config::LoadOptions options;
  options.default_paths = {
      config::kSystemConfigPath,
      (dir / ".." / "share" / "nccom" / "nccom.toml").lexically_normal().string()};
  options.tables = {config::host_knobs()};
  return options;
}

Context::Context(config::Config config, const std::filesystem::path& installed_plugins)
    : config_(std::move(config)), plugin_dirs_(plugin_search_dirs(config_, installed_plugins)) {}

Context::~Context() = default;

Result<std::unique_ptr<Context>> Context::create(const config::LoadOptions& options,
                                                 const CreateOptions& setup) {
  // WARN lines reach the runtime's log from the first one on, a
  // configuration that does not load included: the runtime reports a
  // failed call with what libnccom forwarded during it.
  if (setup.configure_logging) log::set_warn_sink(&forward_to_runtime);
  auto loaded = config::load(options);
  if (!loaded) {
    return make_error(loaded.error().status, invalid_configuration(loaded.error().message));
  }
  std::unique_ptr<Context> context(new Context(std::move(loaded).value(), setup.installed_plugins));
  const config::Config& config = context->config_;
  // Environment values the configuration ignored (a bad NCCL_DEBUG, unknown
  // NCCL_DEBUG_SUBSYS names): one WARN each, once the logger is set up.
  const auto warn_fallbacks = [&config] {
    for (const config::EnvFallback& f : config.env_fallbacks()) NCCOM_WARN("%s", f.message.c_str());
  };
  if (!setup.configure_logging) {
    warn_fallbacks();
    return context;
  }

  auto settings =
      log::parse_settings(config.get_string("log.level"), config.get_string("log.subsys"),
                          config.get_string("log.file"), config.get_string("log.stream"));
  if (!settings) return settings.take_error();
  Status configured = log::configure(*settings);
  if (!configured) NCCOM_WARN("%s", configured.error().message.c_str());
  warn_fallbacks();

  NCCOM_INFO(log::kEnv, "configuration: %s%s%s",
             config.file().empty() ? "built-in defaults (no file)" : config.file().c_str(),
             config.cluster().empty() ? "" : ", cluster ", config.cluster().c_str());
  return context;
}

Result<Context*> Context::get() {
  static std::once_flag once;
  static std::unique_ptr<Context> instance;
  static Error failure;
  std::call_once(once, [] {
    auto created = create(default_load_options());
    if (created) {
      instance = std::move(created).value();
    } else {
      failure = created.take_error();
      // The logger is not configured, so this WARN reaches stderr (and the
      // runtime's log). A later call that fails with it says it again
      // (abi::fail).
      NCCOM_WARN("%s", failure.message.c_str());
    }
  });
  if (!instance) return failure;
  return instance.get();
}

Result<std::size_t> Context::load_plugins(nccom_plugin_kind_t kind,
                                          const std::vector<std::string>& names,
                                          std::vector<plugin::LoadError>* skipped) {
  std::lock_guard lock(plugins_mutex_);
  std::optional<Error> refused;  // the first plugin whose settings are invalid
  const auto host_for = [this, kind, &refused](const plugin::LoadedPlugin& plugin)
      -> Result<const nccom_host_api_t*, plugin::LoadError> {
    const std::string who = std::string(section_of(kind)) + " plugin \"" + plugin.name() + "\" (" +
                            plugin.path().string() + ")";
    auto section = config::PluginSection::bind(config_, plugin.name(), who, plugin.knobs());
    if (!section) {
      if (!refused) refused = section.error();
      return plugin::LoadError{plugin::LoadErrorKind::BadConfiguration, plugin.path().string(),
                               section.error().message};
    }
    host_apis_.push_back(std::make_unique<PluginHostApi>(config_, std::move(section).value()));
    return &host_apis_.back()->api();
  };
  const std::size_t loaded = plugins_.load_all(
      names, kind, host_for, plugin_dirs_, [skipped](const plugin::LoadError& error) {
        if (error.kind == plugin::LoadErrorKind::BadConfiguration) return;  // returned below
        NCCOM_WARN("skipping plugin: %s", error.message.c_str());
        if (skipped != nullptr) skipped->push_back(error);
      });
  if (refused) return *refused;
  return loaded;
}

std::vector<plugin::LoadedPlugin*> Context::plugins(nccom_plugin_kind_t kind) const {
  std::lock_guard lock(plugins_mutex_);
  return plugins_.plugins(kind);
}

plugin::LoadedPlugin* Context::find_plugin(nccom_plugin_kind_t kind,
                                           const std::string& name) const {
  std::lock_guard lock(plugins_mutex_);
  return plugins_.find(kind, name);
}

}  // namespace nccom::core

#include "plugin/plugin_loader.h"

#include <cstddef>
#include <optional>
#include <system_error>
#include <utility>

namespace nccom::plugin {

namespace {

// Descriptor and ops sizes of ABI 1: the least a v1 plugin can declare.
// The descriptor of ABI 1 as first published; `knobs` was appended later.
constexpr uint32_t kMinDescriptorSize = offsetof(nccom_plugin_descriptor_t, knobs);
constexpr uint32_t kDescriptorWithKnobs =
    offsetof(nccom_plugin_descriptor_t, knobs) + sizeof(const nccom_knob_table_t*);
constexpr uint32_t kMinOpsSize = sizeof(nccom_plugin_ops_t);

void no_fini(void*) {}

const char* kind_name(uint32_t kind) {
  switch (kind) {
    case NCCOM_PLUGIN_KIND_NET: return "net";
    case NCCOM_PLUGIN_KIND_TRANSPORT: return "transport";
    case NCCOM_PLUGIN_KIND_TOPOLOGY: return "topology";
  }
  return nullptr;
}

const char* status_name(nccom_plugin_status_t status) {
  switch (status) {
    case NCCOM_PLUGIN_OK: return "NCCOM_PLUGIN_OK";
    case NCCOM_PLUGIN_ERROR: return "NCCOM_PLUGIN_ERROR";
    case NCCOM_PLUGIN_UNSUPPORTED: return "NCCOM_PLUGIN_UNSUPPORTED";
    case NCCOM_PLUGIN_INVALID_ARGUMENT: return "NCCOM_PLUGIN_INVALID_ARGUMENT";
    case NCCOM_PLUGIN_SYSTEM_ERROR: return "NCCOM_PLUGIN_SYSTEM_ERROR";
  }
  return "an unknown status";
}

LoadError error(LoadErrorKind kind, const std::filesystem::path& path, std::string message) {
  return LoadError{kind, path.string(), std::move(message)};
}

// A usable candidate exists and is not a directory (a directory named like
// the plugin must not shadow a later search directory).
bool is_candidate(const std::filesystem::path& p) {
  std::error_code ec;
  auto type = std::filesystem::status(p, ec).type();
  return type != std::filesystem::file_type::not_found &&
         type != std::filesystem::file_type::none && type != std::filesystem::file_type::directory;
}

Result<std::filesystem::path, LoadError> locate(const std::string& name_or_path,
                                                const std::vector<std::filesystem::path>& dirs) {
  if (name_or_path.empty())
    return error(LoadErrorKind::NotFound, "",
                 "empty plugin name in the plugin list; remove the empty entry");
  if (name_or_path.find('/') != std::string::npos) {
    if (is_candidate(name_or_path)) return std::filesystem::path(name_or_path);
    return error(LoadErrorKind::NotFound, name_or_path,
                 name_or_path + ": no such plugin file; check the path in the plugin list");
  }
  for (const auto& candidate : plugin_candidates(name_or_path, dirs))
    if (is_candidate(candidate)) return candidate;

  std::string message = "plugin \"" + name_or_path + "\" not found: tried libnccom-" +
                        name_or_path + ".so and " + name_or_path + " in ";
  if (dirs.empty()) {
    message += "no directories (no plugin search directory is configured)";
  } else {
    for (size_t i = 0; i < dirs.size(); ++i) message += (i ? ", " : "") + dirs[i].string();
  }
  message += "; install the plugin there, add its directory to the search path, or give its path";
  return error(LoadErrorKind::NotFound, name_or_path, std::move(message));
}

// Checks everything open_plugin() promises about `d`, in the documented
// order. The head (abi_version, struct_size) is read before anything else.
std::optional<LoadError> validate(const nccom_plugin_descriptor_t& d,
                                  const std::filesystem::path& path,
                                  nccom_plugin_kind_t expected_kind) {
  const std::string where = path.string() + ": ";
  const uint32_t abi_version = d.abi_version;
  const uint32_t struct_size = d.struct_size;
  if (abi_version != NCCOM_PLUGIN_ABI_VERSION)
    return error(LoadErrorKind::AbiMismatch, path,
                 where + "plugin ABI version got " + std::to_string(abi_version) + ", supports " +
                     std::to_string(NCCOM_PLUGIN_ABI_VERSION) +
                     "; rebuild the plugin against this nccom SDK");
  if (struct_size < kMinDescriptorSize)
    return error(LoadErrorKind::BadDescriptor, path,
                 where + "descriptor struct_size " + std::to_string(struct_size) +
                     " is smaller than the ABI " + std::to_string(NCCOM_PLUGIN_ABI_VERSION) +
                     " descriptor (" + std::to_string(kMinDescriptorSize) +
                     " bytes); set it to sizeof(nccom_plugin_descriptor_t) and rebuild");
  if (kind_name(d.kind) == nullptr)
    return error(LoadErrorKind::BadDescriptor, path,
                 where + "descriptor kind " + std::to_string(d.kind) +
                     " is unknown (1 net, 2 transport, 3 topology); fix the plugin's kind");
  if (d.kind != static_cast<uint32_t>(expected_kind))
    return error(LoadErrorKind::BadDescriptor, path,
                 where + "plugin is of kind " + kind_name(d.kind) + ", but a " +
                     kind_name(expected_kind) + " plugin was requested; list it under " +
                     kind_name(d.kind) + " plugins instead");

  const std::string who = where + "plugin \"" + (d.name ? d.name : "(unnamed)") + "\" ";
  auto null_field = [&](const char* field) {
    return error(LoadErrorKind::NullSlot, path,
                 who + "has NULL mandatory field " + field + "; fill it in and rebuild the plugin");
  };
  if (d.name == nullptr) return null_field("name");
  if (d.name[0] == '\0')
    return error(LoadErrorKind::BadDescriptor, path,
                 where + "plugin name is empty; give the plugin a short unique name");
  if (d.plugin_version == nullptr) return null_field("plugin_version");
  if (d.ops == nullptr) return null_field("ops");
  if (d.ops->struct_size < kMinOpsSize)
    return error(LoadErrorKind::BadDescriptor, path,
                 who + "ops struct_size " + std::to_string(d.ops->struct_size) +
                     " is smaller than the common ops head (" + std::to_string(kMinOpsSize) +
                     " bytes); set it to sizeof the plugin's vtable and rebuild");
  if (d.ops->init == nullptr)
    return error(LoadErrorKind::NullSlot, path,
                 who + "has NULL mandatory slot ops->init; implement init and rebuild the plugin");
  return std::nullopt;
}

}  // namespace

LoadedPlugin::LoadedPlugin(SharedLibrary library, const nccom_plugin_descriptor_t* descriptor)
    : library_(std::move(library)),
      descriptor_(descriptor),
      kind_(static_cast<nccom_plugin_kind_t>(descriptor->kind)),
      name_(descriptor->name),
      plugin_version_(descriptor->plugin_version),
      fini_(descriptor->ops->fini ? descriptor->ops->fini : &no_fini) {}

LoadedPlugin::~LoadedPlugin() {
  if (initialized_) fini_(ctx_);
  // library_ is destroyed after this body, i.e. after fini returned.
}

const nccom_knob_table_t* LoadedPlugin::knobs() const {
  if (descriptor_->struct_size < kDescriptorWithKnobs) return nullptr;
  return descriptor_->knobs;
}

Result<void, LoadError> LoadedPlugin::init(const nccom_host_api_t& host) {
  const std::string who = path().string() + ": plugin \"" + name_ + "\" ";
  if (initialized_)
    return error(LoadErrorKind::InitFailed, path(),
                 who + "is already initialised; the host must call init only once");
  host_ = host;
  void* ctx = nullptr;
  const nccom_plugin_status_t status = descriptor_->ops->init(&host_, &ctx);
  if (status != NCCOM_PLUGIN_OK)
    return error(LoadErrorKind::InitFailed, path(),
                 who + "init returned " + status_name(status) + " (" +
                     std::to_string(static_cast<int>(status)) +
                     "); see the plugin's own messages above and check its configuration");
  ctx_ = ctx;
  initialized_ = true;
  return {};
}

std::vector<std::filesystem::path> plugin_candidates(
    const std::string& name_or_path, const std::vector<std::filesystem::path>& search_dirs) {
  if (name_or_path.find('/') != std::string::npos) return {name_or_path};
  std::vector<std::filesystem::path> out;
  for (const auto& dir : search_dirs) out.push_back(dir / ("libnccom-" + name_or_path + ".so"));
  for (const auto& dir : search_dirs) out.push_back(dir / name_or_path);
  return out;
}

Result<std::unique_ptr<LoadedPlugin>, LoadError> open_plugin(
    const std::string& name_or_path, nccom_plugin_kind_t expected_kind,
    const std::vector<std::filesystem::path>& search_dirs) {
  auto path = locate(name_or_path, search_dirs);
  if (!path) return path.take_error();
  auto library = SharedLibrary::open(path.value());
  if (!library) return library.take_error();

  const auto* descriptor =
      static_cast<const nccom_plugin_descriptor_t*>(library->symbol(NCCOM_PLUGIN_SYMBOL));
  if (descriptor == nullptr)
    return error(LoadErrorKind::MissingSymbol, path.value(),
                 path.value().string() +
                     ": no symbol " NCCOM_PLUGIN_SYMBOL
                     "; not an nccom plugin? Remove it from the plugin list, "
                     "or export a nccom_plugin_descriptor_t named " NCCOM_PLUGIN_SYMBOL);
  if (auto invalid = validate(*descriptor, path.value(), expected_kind)) return *std::move(invalid);
  return std::unique_ptr<LoadedPlugin>(new LoadedPlugin(std::move(library).value(), descriptor));
}

Result<std::unique_ptr<LoadedPlugin>, LoadError> load_plugin(
    const std::string& name_or_path, nccom_plugin_kind_t expected_kind,
    const nccom_host_api_t& host, const std::vector<std::filesystem::path>& search_dirs) {
  auto plugin = open_plugin(name_or_path, expected_kind, search_dirs);
  if (!plugin) return plugin.take_error();
  if (auto started = plugin.value()->init(host); !started) return started.take_error();
  return plugin;
}

}  // namespace nccom::plugin

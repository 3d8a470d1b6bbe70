// nccom::plugin — loading one nccom-native plugin (sdk nccom/plugin.h).
//
// load_plugin() = open_plugin() (locate, dlopen, validate the descriptor)
// followed by LoadedPlugin::init(). The two halves are separate so a caller
// can refuse a plugin (e.g. a duplicate name) before its init runs.
//
// Validation order, each step a distinct LoadErrorKind:
//   exists -> dlopen -> symbol -> abi_version -> struct_size/kind
//          -> NULL mandatory fields and slots -> init
//
// What the loader cannot defend against: a plugin that crashes, hangs or
// corrupts memory inside its own init or fini takes the process with it.
// Surviving that would need the plugin in another process; nccom does not
// attempt it.
#pragma once

#include "plugin/load_error.h"
#include "plugin/shared_library.h"

#include <nccom/plugin.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace nccom::plugin {

// One nccom-native plugin: the library, its validated descriptor and, once
// init succeeded, the plugin's context. Destruction calls ops->fini(ctx) (if
// init ran) and only then closes the library, so the library outlives every
// object the plugin created. Held by unique_ptr; neither copied nor moved,
// so the host API copy whose address the plugin received stays put.
class LoadedPlugin {
 public:
  LoadedPlugin(const LoadedPlugin&) = delete;
  LoadedPlugin& operator=(const LoadedPlugin&) = delete;
  ~LoadedPlugin();

  // Calls the plugin's init once with a copy of `host` owned by this object
  // (valid until fini). InitFailed if it returns non-OK; then fini is not
  // called, since init must release what it acquired before failing.
  [[nodiscard]] Result<void, LoadError> init(const nccom_host_api_t& host);
  bool initialized() const { return initialized_; }

  const std::string& name() const { return name_; }
  const std::string& plugin_version() const { return plugin_version_; }
  nccom_plugin_kind_t kind() const { return kind_; }
  uint64_t capabilities() const { return descriptor_->capabilities; }
  const std::filesystem::path& path() const { return library_.path(); }

  // The descriptor and its vtable, validated; for the kind-specific adapter,
  // which must still check ops()->struct_size before reading appended slots.
  const nccom_plugin_descriptor_t& descriptor() const { return *descriptor_; }
  const nccom_plugin_ops_t& ops() const { return *descriptor_->ops; }
  // The plugin's knob table (nccom/knob.h), or nullptr: a descriptor built
  // before the field existed, or a plugin that declares none.
  const nccom_knob_table_t* knobs() const;
  // What init stored in *plugin_ctx (nullptr before init).
  void* context() const { return ctx_; }
  // For further symbols of the same object.
  const SharedLibrary& library() const { return library_; }

 private:
  friend Result<std::unique_ptr<LoadedPlugin>, LoadError> open_plugin(
      const std::string&, nccom_plugin_kind_t, const std::vector<std::filesystem::path>&);
  LoadedPlugin(SharedLibrary library, const nccom_plugin_descriptor_t* descriptor);

  // Declared first so it is destroyed last.
  SharedLibrary library_;
  const nccom_plugin_descriptor_t* descriptor_;
  nccom_plugin_kind_t kind_;
  std::string name_;
  std::string plugin_version_;
  void (*fini_)(void*);  // never NULL: a no-op stands in for an absent fini
  nccom_host_api_t host_{};
  void* ctx_ = nullptr;
  bool initialized_ = false;
};

// Where a plugin named `name_or_path` would be looked for, in order. A string
// containing '/' is a path and the only candidate. A bare name "socket" is
// tried as libnccom-socket.so in each directory, then as "socket" itself in
// each directory.
std::vector<std::filesystem::path> plugin_candidates(
    const std::string& name_or_path, const std::vector<std::filesystem::path>& search_dirs);

// Locates, opens and validates a plugin of `expected_kind`, without calling
// its init.
Result<std::unique_ptr<LoadedPlugin>, LoadError> open_plugin(
    const std::string& name_or_path, nccom_plugin_kind_t expected_kind,
    const std::vector<std::filesystem::path>& search_dirs);

// open_plugin() followed by init(host).
Result<std::unique_ptr<LoadedPlugin>, LoadError> load_plugin(
    const std::string& name_or_path, nccom_plugin_kind_t expected_kind,
    const nccom_host_api_t& host, const std::vector<std::filesystem::path>& search_dirs);

}  // namespace nccom::plugin

// nccom::config::PluginSection — the knobs a plugin declares (nccom/knob.h),
// resolved against the configuration.
//
// A plugin's table is read when the plugin is loaded, long after the file and
// environment were: PluginSection::bind() checks the table (a broken table is
// the plugin's fault and says so), then applies the same layers as load() —
// default < [plugins.<name>] < the active [clusters.<c>.plugins.<name>] <
// environment — and checks every value the file sets for that plugin, in
// every cluster section, against the declared knobs. All problems come back
// together in one NRT_INVALID error, one per line.
#pragma once

#include "config/config.h"
#include "config/knob.h"

#include <nccom/knob.h>
#include <nccom/util/result.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace nccom::config {

// Whether `name` can name a plugin section: lower case letters, digits and
// '_', starting with a letter, at most NCCOM_KNOB_MAX_NAME bytes, and not a
// host key of [plugins] ("search_path").
bool valid_plugin_section_name(std::string_view name);

class PluginSection {
 public:
  // `plugin` is the section name; `who` names the plugin in messages
  // ("topology plugin flat (/opt/x/libnccom-flat.so)"). `table` may be NULL
  // (no knobs: only the file's values are checked, and every one is
  // unknown).
  static Result<PluginSection> bind(const Config& config, std::string plugin,
                                    const std::string& who, const nccom_knob_table_t* table);

  PluginSection(PluginSection&&) noexcept;
  PluginSection& operator=(PluginSection&&) noexcept;
  ~PluginSection();

  const std::string& plugin() const { return plugin_; }
  // Entries keyed by their full name ("plugins.flat.width"), declaration order.
  const std::vector<Entry>& entries() const { return entries_; }
  // The entry of a key inside the section ("width"), or nullptr.
  const Entry* find(std::string_view key) const;

  // The same table as Config::describe(), headed by the plugin.
  std::string describe(const std::string& who) const;

 private:
  struct Storage;
  PluginSection();

  std::string plugin_;
  std::unique_ptr<Storage> storage_;  // the converted knobs; Entry::knob points here
  std::vector<Entry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;  // short key -> entry
};

// The lines of a knob table (key, value, source, help, facts), as describe()
// prints them; shared by Config and PluginSection.
std::string describe_entries(const std::vector<Entry>& entries);

}  // namespace nccom::config

#include "core/environment_report.h"

#include "config/environment.h"
#include "log/log.h"

#include <mutex>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere

namespace nccom::core {

EnvironmentReport environment_report(const Context& context,
                                     const std::vector<std::string>& environ_names) {
  const config::Config& config = context.config();
  EnvironmentReport report;
  for (const config::EnvNote& note :
       config::environment_notes(config::knob_variables(config), environ_names)) {
    (note.nccl ? report.infos : report.warnings).push_back(config::note_text(note));
  }
  std::set<std::string> found = config::plugin_names_in(context.plugin_dirs());
  const config::PluginClaims claims = config.plugin_claims();
  found.insert(claims.sections.begin(), claims.sections.end());
  for (const config::SectionNote& note : config::plugin_section_notes(config, found)) {
    // Without a close name the section is most likely for a plugin of other
    // machines that share the file: worth a line, not a warning.
    (note.suggestion.empty() ? report.infos : report.warnings)
        .push_back(config::section_note_text(note));
  }
  return report;
}

void report_environment_once(const Context& context) {
  static std::once_flag once;
  std::call_once(once, [&context] {
    const EnvironmentReport report = environment_report(context, config::environ_names(environ));
    for (const std::string& line : report.warnings) NCCOM_WARN("%s", line.c_str());
    for (const std::string& line : report.infos) NCCOM_INFO(log::kEnv, "%s", line.c_str());
  });
}

}  // namespace nccom::core

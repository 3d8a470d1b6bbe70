/*
 * nccom/knob.h — configuration knobs a plugin declares for itself.
 *
 * A plugin lists its settings in one constant table; the host reads the table
 * when it loads the plugin (before the plugin's init or configure runs),
 * validates it, and resolves every knob the way it resolves its own:
 *
 *   default  <  [plugins.<plugin>] in the configuration file
 *            <  [clusters.<active>.plugins.<plugin>]  <  the environment
 *
 * (the first variable of `env` that is set and non-empty wins). A value of
 * the wrong type, out of range, or not one of an enum's names, and any key
 * under [plugins.<plugin>] the plugin did not declare, is an error naming the
 * plugin, the key and where the value came from; the host then does not use
 * the plugin. The plugin reads the effective values as text through
 * nccom_host_api_t::config_get(host_ctx, "<key>"). `nccom-config` lists the
 * knobs of every plugin the configuration would load, with their sources.
 *
 * Every pointer in a table refers to static storage of the plugin and must
 * stay valid while the plugin is loaded.
 *
 * Pure C99; usable from C++.
 */
#ifndef NCCOM_KNOB_H
#define NCCOM_KNOB_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  NCCOM_KNOB_BOOL = 1,   /* TOML boolean; environment 1/0, true/false, yes/no, on/off */
  NCCOM_KNOB_INT = 2,    /* TOML integer; environment decimal; within [min, max] */
  NCCOM_KNOB_STRING = 3, /* TOML string; any text */
  NCCOM_KNOB_ENUM = 4    /* TOML string; one of `allowed` */
} nccom_knob_type_t;

/* Flag bits of nccom_knob_t::flags. */
/* ENUM: names compare case-insensitively; the text is handed over as written. */
#define NCCOM_KNOB_CASE_INSENSITIVE 1u
/* BOOL, environment only: any non-empty value other than 0/false/no/off is on. */
#define NCCOM_KNOB_PRESENCE_MEANS_TRUE 2u

/* Limits the host enforces on a table (a table outside them is refused). */
#define NCCOM_KNOB_MAX_COUNT 128u /* knobs per plugin */
#define NCCOM_KNOB_MAX_NAME 64u   /* bytes of a key or of an environment name */
#define NCCOM_KNOB_MAX_TEXT 4096u /* bytes of a help text, default or enum name */
#define NCCOM_KNOB_MAX_LIST 64u   /* entries of `env` or `allowed` */

typedef struct nccom_knob {
  /* Mandatory. The key inside the plugin's section: lower case letters,
   * digits and '_', starting with a letter, no dots. "nthreads" is set as
   * plugins.<plugin>.nthreads and read with config_get(ctx, "nthreads"). */
  const char* key;
  uint32_t type;  /* nccom_knob_type_t */
  uint32_t flags; /* NCCOM_KNOB_* bits */
  /* The default, written as an environment value would be ("4", "true",
   * "auto"); NULL is the empty string. It must itself be a valid value. */
  const char* default_text;
  /* Mandatory. What the knob does, its unit and range, in sentences. */
  const char* help;
  int64_t min; /* INT only: inclusive bounds, min <= max */
  int64_t max;
  /* ENUM only: the allowed names, NULL-terminated, at least one. */
  const char* const* allowed;
  /* Optional: environment variables that override the file, in order,
   * NULL-terminated; NULL when none. Names may be shared with the host's
   * own knobs (NCCL reads one variable in several places). */
  const char* const* env;
} nccom_knob_t;

/* A plugin's knob table. Size-first: the host reads `knob_size` bytes per
 * entry, so knobs built against an older (smaller) nccom_knob_t still load. */
typedef struct nccom_knob_table {
  uint32_t struct_size; /* sizeof(nccom_knob_table_t) */
  uint32_t knob_size;   /* sizeof(nccom_knob_t) the plugin was built with */
  uint32_t count;       /* entries of `knobs`, at most NCCOM_KNOB_MAX_COUNT */
  uint32_t reserved;
  const nccom_knob_t* knobs;
} nccom_knob_table_t;

/* For plugin authors:
 *   static const nccom_knob_t kKnobs[] = {...};
 *   static const nccom_knob_table_t kTable = NCCOM_KNOB_TABLE(kKnobs); */
#define NCCOM_KNOB_TABLE(array)                                     \
  {                                                                 \
    sizeof(nccom_knob_table_t), sizeof(nccom_knob_t),               \
        (uint32_t)(sizeof(array) / sizeof((array)[0])), 0u, (array) \
  }

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* NCCOM_KNOB_H */

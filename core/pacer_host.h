/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pacer_host.h -- finding, loading, validating and running controllers.
 *
 * The host side of cupace/pacer.h.  A controller is found by name on the
 * search path ([pacer] path, $CUPACE_PACER_PATH, the installed pacerdir),
 * opened with dlopen(RTLD_NOW|RTLD_LOCAL), validated once
 * (cupace_pacer_validate), and instantiated per label with its own zeroed
 * state and its own INI section.  Every refusal names the plugin, the file and
 * the reason.  Nothing here is global: two instances of one plugin are two
 * states over one dlopen handle (reference-counted by the dynamic loader).
 */
#ifndef CUPACE_PACER_HOST_H
#define CUPACE_PACER_HOST_H

#include <stddef.h>

#include "conf.h"
#include "cupace/pacer.h"
#include "cupace/stage.h"
#include "error.h"

/* The engine's search path, in order.  Entries are borrowed strings, except
 * those the host builds; free with cupace_pacer_path_free(). */
struct cupace_pacer_path {
    char **dirs;
    size_t ndirs;
};

struct cupace_pacer_instance {
    char label[128];
    char plugin[128];
    char file[4096];
    void *dl;
    const struct cupace_pacer *ops;
    void *state;
    int inited;
};

/* The search path for a config (cfg may be NULL: environment and pacerdir). */
void cupace_pacer_path_init(struct cupace_pacer_path *path, const struct cupace_config *cfg);
void cupace_pacer_path_free(struct cupace_pacer_path *path);

/* Checks a controller table: ABI, size, name, required ops.  `symsize` is
 * the exported object's size when the loader knows it (0 otherwise).
 * Returns 0, or -1 with the reason (no file name) in why. */
int cupace_pacer_validate(const struct cupace_pacer *p, size_t symsize, char *why, size_t len);

/* Finds NAME.so on the path.  Refuses a name that is not a plain identifier
 * before anything is opened. */
int cupace_pacer_find(const struct cupace_pacer_path *path, const char *name, char *file,
                      size_t len, struct cupace_err *err);

/* Opens FILE and validates its table; on success *dl and *ops are set and
 * the caller dlclose()s *dl. */
int cupace_pacer_open(const char *file, void **dl, const struct cupace_pacer **ops,
                      struct cupace_err *err);

/* Creates the instance LABEL of the config: find, open, allocate, init,
 * refuse unknown keys. */
int cupace_pacer_instance_create(struct cupace_pacer_instance *inst, struct cupace_config *cfg,
                                 const struct cupace_pacer_path *path, const char *label,
                                 struct cupace_err *err);
/* The same on the config's own search path (cupace_pacer_path_init). */
int cupace_pacer_instance_open(struct cupace_pacer_instance *inst, struct cupace_config *cfg,
                               const char *label, struct cupace_err *err);
void cupace_pacer_instance_destroy(struct cupace_pacer_instance *inst);

/* The params object over one section of the config (NULL: no keys), named
 * NAME in messages ("pacer.LABEL", "stages.NAME").  Each get_* marks its key
 * as asked for and parses it with the configuration's own parsers. */
struct cupace_params_ctx {
    struct cupace_pacer_section *section;
    char name[160];
    struct cupace_err bad;          /* the first malformed value */
    int has_bad;
};
void cupace_params_bind(struct cupace_params *p, struct cupace_params_ctx *pc,
                        struct cupace_pacer_section *section, const char *name);
/* After the plugin's init: the first malformed value, or a key it never
 * asked for, naming WHO ("controller 'NAME'"); 0 when neither. */
int cupace_params_check(const struct cupace_params_ctx *pc, const char *who, struct cupace_err *err);

/* A stage plugin ([engine] backend = NAME): NAME.so found on the same
 * path as controllers, exporting cupace_stages_entry, checked like one. */
struct cupace_stage_plugin {
    char name[128];
    char file[4096];
    void *dl;
    const struct cupace_stages *ops;
};
int cupace_stages_open(const char *file, void **dl, const struct cupace_stages **ops,
                       struct cupace_err *err);
int cupace_stage_plugin_open(struct cupace_stage_plugin *sp, const struct cupace_pacer_path *path,
                             const char *name, struct cupace_err *err);
void cupace_stage_plugin_close(struct cupace_stage_plugin *sp);

/* describe(), or "" where the controller has none. */
void cupace_pacer_instance_describe(struct cupace_pacer_instance *inst, char *buf, size_t len);

/* For `cupace plugins`: calls `found` for every NAME.so on the path, in
 * order, with either ops (loaded, valid) or a reason; `shadowed_by` is the
 * file that an earlier folder provides for the same name, or NULL. */
typedef void (*cupace_pacer_visit_fn)(void *ctx, const char *file, const struct cupace_pacer *ops,
                                      const char *reason, const char *shadowed_by);
void cupace_pacer_scan(const struct cupace_pacer_path *path, cupace_pacer_visit_fn found,
                       void *ctx);
/* The same for stage plugins. */
typedef void (*cupace_stages_visit_fn)(void *ctx, const char *file, const struct cupace_stages *ops,
                                       const char *reason, const char *shadowed_by);
void cupace_stages_scan(const struct cupace_pacer_path *path, cupace_stages_visit_fn found,
                        void *ctx);

#endif

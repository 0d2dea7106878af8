/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * pacer_host.c -- the dlopen loader and the params object of plugins:
 * controllers (cupace/pacer.h) and stage plugins (cupace/stage.h), found
 * on one search path, opened and refused by the same code, told apart by
 * the symbol they export.
 *
 * Validation lives in one function per kind, cupace_pacer_validate() and
 * cupace_stages_validate() (stages.c), beside the rules written in their
 * headers.  The params object wraps one section ([pacer.LABEL] or
 * [stages.NAME]): each get_* marks its key as asked for and parses with the same
 * parsers as the rest of the configuration, so a malformed value is
 * reported with the file, line and key even if the controller ignores the
 * error.
 */
#define _GNU_SOURCE 1
#include "config.h"
#include "pacer_host.h"
#include "stages.h"
#include "text.h"
#include "units.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(((struct cupace_pacer_instance *)0)->label) > CUPACE_NAME_MAX &&
               sizeof(((struct cupace_pacer_instance *)0)->plugin) > CUPACE_NAME_MAX,
               "an instance holds any label and plugin name whole");

#ifndef CUPACE_PACERDIR
#define CUPACE_PACERDIR "/usr/local/lib/cupace"
#endif

/* ---- the search path --------------------------------------------------- */

static void path_add_list(struct cupace_pacer_path *path, const char *list, const char *base)
{
    const char *p = list;

    while (p && *p) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);

        while (n && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n) {
            char *d;
            size_t blen = (base && p[0] != '/') ? strlen(base) + 1 : 0;
            char **dirs = realloc(path->dirs, (path->ndirs + 1) * sizeof *dirs);

            d = malloc(blen + n + 1);
            if (!dirs || !d) {
                free(d);
                if (dirs)
                    path->dirs = dirs;
                return;
            }
            path->dirs = dirs;
            if (blen)
                snprintf(d, blen + n + 1, "%s/%.*s", base, (int)n, p);
            else
                snprintf(d, n + 1, "%.*s", (int)n, p);
            path->dirs[path->ndirs++] = d;
        }
        p = end ? end + 1 : NULL;
    }
}

void cupace_pacer_path_init(struct cupace_pacer_path *path, const struct cupace_config *cfg)
{
    path->dirs = NULL;
    path->ndirs = 0;
    if (cfg && cfg->pacer_path)
        path_add_list(path, cfg->pacer_path, cfg->dir);  /* relative to the config file */
    path_add_list(path, getenv("CUPACE_PACER_PATH"), NULL);
    path_add_list(path, CUPACE_PACERDIR, NULL);
}

void cupace_pacer_path_free(struct cupace_pacer_path *path)
{
    for (size_t i = 0; i < path->ndirs; i++)
        free(path->dirs[i]);
    free(path->dirs);
    path->dirs = NULL;
    path->ndirs = 0;
}

/* ---- validation -------------------------------------------------------- */

int cupace_pacer_validate(const struct cupace_pacer *p, size_t symsize, char *why, size_t len)
{
    /* The first two fields are all we may read before knowing the size. */
    if (symsize && symsize < offsetof(struct cupace_pacer, name)) {
        snprintf(why, len, "its cupace_pacer_entry is %zu bytes, too small to hold abi and size",
                 symsize);
        return -1;
    }
    if (p->abi != CUPACE_PACER_ABI) {
        snprintf(why, len, "it was built for controller ABI %u, this cupace speaks ABI %u: "
                 "rebuild it against this cupace's cupace/pacer.h", p->abi, (unsigned)CUPACE_PACER_ABI);
        return -1;
    }
    if (p->size < sizeof(struct cupace_pacer) || (symsize && symsize < sizeof(struct cupace_pacer))) {
        snprintf(why, len, "its struct cupace_pacer is %u bytes, this cupace needs at least %zu: "
                 "rebuild it against this cupace's cupace/pacer.h", p->size,
                 sizeof(struct cupace_pacer));
        return -1;
    }
    if (!p->name || !cupace_is_identifier(p->name)) {
        snprintf(why, len, "its name is missing or not a plain identifier");
        return -1;
    }
    if (!p->init || !p->update || !p->interval_ns) {
        snprintf(why, len, "the required op %s is NULL",
                 !p->init ? "init" : !p->update ? "update" : "interval_ns");
        return -1;
    }
    if (p->state_size > ((size_t)1 << 30)) {
        snprintf(why, len, "it asks for %zu bytes of state per instance (more than 1 GiB)",
                 p->state_size);
        return -1;
    }
    return 0;
}

/* ---- finding and opening ----------------------------------------------- */

static int is_regular_file(const char *file)
{
    struct stat st;

    return stat(file, &st) == 0 && S_ISREG(st.st_mode);
}

/* What tells the two kinds of plugin apart. */
struct plugin_kind {
    const char *noun;               /* "controller", "stage plugin" */
    const char *symbol;             /* what it exports */
    const char *decl;               /* how, for the message when it does not */
    int (*validate)(const void *ops, size_t symsize, char *why, size_t len);
    const char *(*name_of)(const void *ops);
};

static int validate_pacer(const void *ops, size_t symsize, char *why, size_t len)
{
    return cupace_pacer_validate(ops, symsize, why, len);
}

static const char *pacer_name(const void *ops)
{
    return ((const struct cupace_pacer *)ops)->name;
}

static int validate_stages(const void *ops, size_t symsize, char *why, size_t len)
{
    return cupace_stages_validate(ops, symsize, why, len);
}

static const char *stages_name(const void *ops)
{
    return ((const struct cupace_stages *)ops)->name;
}

static const struct plugin_kind pacer_kind = {
    "controller", CUPACE_PACER_ENTRY_SYMBOL, "const struct cupace_pacer cupace_pacer_entry",
    validate_pacer, pacer_name,
};

static const struct plugin_kind stage_kind = {
    "stage plugin", "cupace_stages_entry", "const struct cupace_stages cupace_stages_entry",
    validate_stages, stages_name,
};

static int find_kind(const struct cupace_pacer_path *path, const char *noun, const char *name,
                     char *file, size_t len, struct cupace_err *err)
{
    char tried[768] = "";

    if (!cupace_is_identifier(name))
        return cupace_err_set(err, "%s '%s': not a plain name (" CUPACE_NAME_RULE "); "
                              "put its folder in [pacer] path or CUPACE_PACER_PATH instead of "
                              "naming a file", noun, name);
    for (size_t i = 0; i < path->ndirs; i++) {
        if ((size_t)snprintf(file, len, "%s/%s.so", path->dirs[i], name) >= len)
            continue;                   /* longer than any path the system can open */
        if (is_regular_file(file))
            return 0;
        if (strlen(tried) + strlen(path->dirs[i]) + 3 < sizeof tried)
            snprintf(tried + strlen(tried), sizeof tried - strlen(tried), "%s%s", i ? ":" : "",
                     path->dirs[i]);
    }
    return cupace_err_set(err, "%s '%s': no %s.so in %s (add its folder to [pacer] path "
                          "or CUPACE_PACER_PATH; `cupace plugins` lists what is found)",
                          noun, name, name, tried);
}

int cupace_pacer_find(const struct cupace_pacer_path *path, const char *name, char *file,
                      size_t len, struct cupace_err *err)
{
    return find_kind(path, "controller", name, file, len, err);
}

/* Turns a dlerror() string into advice for the operator. */
static const char *dlopen_hint(const char *msg)
{
    if (strstr(msg, "invalid ELF header") || strstr(msg, "file too short") ||
        strstr(msg, "not an ELF"))
        return "this is not a shared object: rebuild it with cc -shared -fPIC";
    if (strstr(msg, "wrong ELF class") || strstr(msg, "ELF file OS ABI") ||
        strstr(msg, "machine"))
        return "it was built for another architecture";
    if (strstr(msg, "undefined symbol"))
        return "it uses a symbol nobody provides: controllers must not link against the engine";
    if (strstr(msg, "cannot open shared object file"))
        return "a library it needs is missing: run `ldd` on it";
    return "run `ldd` on it to see what the loader misses";
}

static int open_kind(const char *file, const struct plugin_kind *kind, void **dlp, const void **opsp,
                     struct cupace_err *err)
{
    const void *ops;
    const ElfW(Sym) *sym = NULL;
    Dl_info info;
    char why[512];
    void *dl;

    dlerror();
    dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!dl) {
        const char *msg = dlerror();
        return cupace_err_set(err, "%s: cannot load: %s (%s)", file, msg ? msg : "unknown error",
                              dlopen_hint(msg ? msg : ""));
    }
    ops = dlsym(dl, kind->symbol);
    if (!ops) {
        dlclose(dl);
        return cupace_err_set(err, "%s: no symbol '%s': not a cupace %s (it must export %s)", file,
                              kind->symbol, kind->noun, kind->decl);
    }
    if (!dladdr1(ops, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        sym = NULL;
    if (kind->validate(ops, sym ? (size_t)sym->st_size : 0, why, sizeof why) < 0) {
        dlclose(dl);
        return cupace_err_set(err, "%s: refused: %s", file, why);
    }
    *dlp = dl;
    *opsp = ops;
    return 0;
}

int cupace_pacer_open(const char *file, void **dlp, const struct cupace_pacer **opsp,
                      struct cupace_err *err)
{
    const void *ops;

    if (open_kind(file, &pacer_kind, dlp, &ops, err) < 0)
        return -1;
    *opsp = ops;
    return 0;
}

int cupace_stages_open(const char *file, void **dlp, const struct cupace_stages **opsp,
                       struct cupace_err *err)
{
    const void *ops;

    if (open_kind(file, &stage_kind, dlp, &ops, err) < 0)
        return -1;
    *opsp = ops;
    return 0;
}

/* Whether FILE exports SYMBOL (opened and closed again); for the listing. */
static int exports(const char *file, const char *symbol)
{
    void *dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    int yes;

    if (!dl)
        return 0;
    yes = dlsym(dl, symbol) != NULL;
    dlclose(dl);
    return yes;
}

/* ---- the params object ------------------------------------------------- */

static struct cupace_kv *params_find(struct cupace_params_ctx *c, const char *key)
{
    if (!c->section || !key)
        return NULL;
    for (size_t i = 0; i < c->section->nkv; i++)
        if (strcmp(c->section->kv[i].key, key) == 0) {
            c->section->kv[i].used = 1;
            return &c->section->kv[i];
        }
    return NULL;
}

static int params_bad(struct cupace_params_ctx *c, const struct cupace_kv *kv, const char *why)
{
    if (!c->has_bad) {
        cupace_err_set(&c->bad, "expected %s, got '%s'", why, kv->value);
        cupace_err_at(&c->bad, &kv->at, c->name, kv->key);
    }
    c->has_bad = 1;
    return -1;
}

static const char *params_get(void *ctx, const char *key)
{
    struct cupace_kv *kv = params_find(ctx, key);

    return kv ? kv->value : NULL;
}

static int params_get_f64(void *ctx, const char *key, double def, double *out)
{
    struct cupace_kv *kv = params_find(ctx, key);
    const char *why;

    if (!kv) {
        *out = def;
        return 0;
    }
    return cupace_parse_f64(kv->value, out, &why) < 0 ? params_bad(ctx, kv, why) : 0;
}

/* Durations and integers: one lookup, two parsers. */
static int params_get_uint(void *ctx, const char *key, uint64_t def, uint64_t *out,
                           int (*parse)(const char *, uint64_t *, const char **))
{
    struct cupace_kv *kv = params_find(ctx, key);
    const char *why;

    if (!kv) {
        *out = def;
        return 0;
    }
    return parse(kv->value, out, &why) < 0 ? params_bad(ctx, kv, why) : 0;
}

static int params_get_ns(void *ctx, const char *key, uint64_t def, uint64_t *out)
{
    return params_get_uint(ctx, key, def, out, cupace_parse_duration);
}

static int params_get_u64(void *ctx, const char *key, uint64_t def, uint64_t *out)
{
    return params_get_uint(ctx, key, def, out, cupace_parse_u64);
}

static int params_get_bool(void *ctx, const char *key, int def, int *out)
{
    struct cupace_kv *kv = params_find(ctx, key);
    const char *why;

    if (!kv) {
        *out = def;
        return 0;
    }
    return cupace_parse_bool(kv->value, out, &why) < 0 ? params_bad(ctx, kv, why) : 0;
}

/* ---- instances --------------------------------------------------------- */

void cupace_params_bind(struct cupace_params *p, struct cupace_params_ctx *pc,
                        struct cupace_pacer_section *section, const char *name)
{
    memset(pc, 0, sizeof *pc);
    pc->section = section;
    snprintf(pc->name, sizeof pc->name, "%s", name);
    *p = (struct cupace_params){
        .ctx = pc, .get = params_get, .get_f64 = params_get_f64, .get_ns = params_get_ns,
        .get_u64 = params_get_u64, .get_bool = params_get_bool,
    };
}

int cupace_params_check(const struct cupace_params_ctx *pc, const char *who, struct cupace_err *err)
{
    if (pc->has_bad)
        return cupace_err_set(err, "%s", pc->bad.msg);
    if (pc->section)
        for (size_t i = 0; i < pc->section->nkv; i++) {
            const struct cupace_kv *kv = &pc->section->kv[i];

            if (!kv->used) {
                cupace_err_set(err, "unknown key: %s never asked for it", who);
                cupace_err_at(err, &kv->at, pc->name, kv->key);
                return -1;
            }
        }
    return 0;
}

/* The key of SEC that a controller's reason WHY begins with ("alpha must
 * be in (0, 1]"), the longest if several; NULL if none. */
static const struct cupace_kv *key_named_by(const struct cupace_pacer_section *sec, const char *why)
{
    const struct cupace_kv *best = NULL;

    for (size_t i = 0; sec && i < sec->nkv; i++) {
        size_t n = strlen(sec->kv[i].key);

        if (strncmp(why, sec->kv[i].key, n) == 0 &&
            !(isalnum((unsigned char)why[n]) || why[n] == '_') && (!best || n > strlen(best->key)))
            best = &sec->kv[i];
    }
    return best;
}

/* Says where the configuration asked for what controller LABEL could not
 * be: the line of its section's KEY where AT is set, else its section's
 * header; without a section, [pacer] name or [ab] pacers where they name
 * it.  A label that only the command line names (--pacer) has no line. */
static void err_at(struct cupace_err *err, struct cupace_config *cfg, const char *label,
                   const struct cupace_origin *at, const char *key)
{
    const struct cupace_pacer_section *sec = cupace_config_section(cfg, label);
    const struct cupace_origin *name_at = cupace_config_origin(cfg, "pacer", "name");
    char section[160];

    if (sec) {
        snprintf(section, sizeof section, "pacer.%s", label);
        if (at && at->file)
            cupace_err_at(err, at, section, key);
        else
            cupace_err_at(err, &sec->at, section, NULL);
        return;
    }
    if (name_at && cfg->pacer_name && strcmp(cfg->pacer_name, label) == 0) {
        cupace_err_at(err, name_at, "pacer", "name");
        return;
    }
    for (size_t i = 0; i < cfg->nab; i++)
        if (strcmp(cfg->ab[i], label) == 0) {
            cupace_err_at(err, cupace_config_origin(cfg, "ab", "pacers"), "ab", "pacers");
            return;
        }
}

static int instance_init(struct cupace_pacer_instance *inst, struct cupace_config *cfg,
                         struct cupace_err *err)
{
    struct cupace_params params;
    struct cupace_params_ctx pc;
    struct cupace_lent why;
    char name[160], who[200];
    int rc;

    snprintf(name, sizeof name, "pacer.%s", inst->label);
    snprintf(who, sizeof who, "controller '%s'", inst->plugin);
    cupace_params_bind(&params, &pc, cupace_config_section(cfg, inst->label), name);
    inst->state = calloc(1, inst->ops->state_size ? inst->ops->state_size : 1);
    if (!inst->state)
        return cupace_err_set(err, "controller '%s': out of memory for its state", inst->label);
    cupace_lend(&why, CUPACE_LENT_MAX);
    rc = inst->ops->init(inst->state, &params, why.buf, CUPACE_LENT_MAX);
    inst->inited = rc == 0;
    if (cupace_take_back(&why, CUPACE_LENT_MAX) < 0)
        return cupace_err_set(err, "controller '%s' (%s): init wrote past the %d bytes of its "
                              "error buffer", inst->label, inst->file, CUPACE_LENT_MAX);
    if (rc != 0) {
        const struct cupace_kv *kv = key_named_by(cupace_config_section(cfg, inst->label), why.buf);

        if (pc.has_bad)
            return cupace_err_set(err, "%s", pc.bad.msg);
        cupace_err_set(err, "controller '%s' (%s): init failed: %s", inst->label, inst->file,
                       why.buf[0] ? why.buf : "no reason given");
        err_at(err, cfg, inst->label, kv ? &kv->at : NULL, kv ? kv->key : NULL);
        return -1;
    }
    return cupace_params_check(&pc, who, err);
}

int cupace_pacer_instance_create(struct cupace_pacer_instance *inst, struct cupace_config *cfg,
                                 const struct cupace_pacer_path *path, const char *label,
                                 struct cupace_err *err)
{
    const char *plugin;

    memset(inst, 0, sizeof *inst);
    if (!cupace_is_identifier(label))
        return cupace_err_set(err, "controller '%s': not a plain name (" CUPACE_NAME_RULE ")", label);
    plugin = cupace_config_plugin_of(cfg, label);
    snprintf(inst->label, sizeof inst->label, "%s", label);
    snprintf(inst->plugin, sizeof inst->plugin, "%s", plugin);
    if (cupace_pacer_find(path, plugin, inst->file, sizeof inst->file, err) < 0) {
        const struct cupace_pacer_section *sec = cupace_config_section(cfg, label);

        err_at(err, cfg, label, sec ? &sec->plugin_at : NULL, "plugin");
        return -1;
    }
    if (cupace_pacer_open(inst->file, &inst->dl, &inst->ops, err) < 0) {
        cupace_err_prefix(err, "controller '%s'", plugin);
        return -1;
    }
    if (strcmp(inst->ops->name, plugin) != 0) {
        cupace_err_set(err, "controller '%s' (%s): the file calls itself '%s'; a controller's "
                       "file must be NAME.so for its name", plugin, inst->file, inst->ops->name);
        goto fail;
    }
    if (instance_init(inst, cfg, err) < 0)
        goto fail;
    return 0;
fail:
    cupace_pacer_instance_destroy(inst);
    return -1;
}

int cupace_pacer_instance_open(struct cupace_pacer_instance *inst, struct cupace_config *cfg,
                               const char *label, struct cupace_err *err)
{
    struct cupace_pacer_path path;
    int rc;

    cupace_pacer_path_init(&path, cfg);
    rc = cupace_pacer_instance_create(inst, cfg, &path, label, err);
    cupace_pacer_path_free(&path);
    return rc;
}

void cupace_pacer_instance_destroy(struct cupace_pacer_instance *inst)
{
    if (inst->inited && inst->ops->fini)
        inst->ops->fini(inst->state);
    free(inst->state);
    if (inst->dl)
        dlclose(inst->dl);
    inst->state = NULL;
    inst->dl = NULL;
    inst->ops = NULL;
    inst->inited = 0;
}

/* ---- stage plugins ------------------------------------------------------- */

int cupace_stage_plugin_open(struct cupace_stage_plugin *sp, const struct cupace_pacer_path *path,
                             const char *name, struct cupace_err *err)
{
    memset(sp, 0, sizeof *sp);
    snprintf(sp->name, sizeof sp->name, "%s", name);
    if (find_kind(path, "stage plugin", name, sp->file, sizeof sp->file, err) < 0)
        return -1;
    if (cupace_stages_open(sp->file, &sp->dl, &sp->ops, err) < 0) {
        cupace_err_prefix(err, "stage plugin '%s'", name);
        return -1;
    }
    if (strcmp(sp->ops->name, name) != 0) {
        cupace_err_set(err, "stage plugin '%s' (%s): the file calls itself '%s'; a stage plugin's "
                       "file must be NAME.so for its name", name, sp->file, sp->ops->name);
        cupace_stage_plugin_close(sp);
        return -1;
    }
    return 0;
}

void cupace_stage_plugin_close(struct cupace_stage_plugin *sp)
{
    if (sp->dl)
        dlclose(sp->dl);
    sp->dl = NULL;
    sp->ops = NULL;
}

void cupace_pacer_instance_describe(struct cupace_pacer_instance *inst, char *buf, size_t len)
{
    struct cupace_lent text;
    size_t n = len < CUPACE_LENT_MAX ? len : CUPACE_LENT_MAX;

    buf[0] = '\0';
    if (!inst->ops || !inst->ops->describe || len == 0)
        return;
    cupace_lend(&text, n);
    if (inst->ops->describe(inst->state, text.buf, n) < 0)
        text.buf[0] = '\0';
    if (cupace_take_back(&text, n) < 0) {
        snprintf(buf, len, "(describe wrote past the %zu bytes it was given)", n);
        return;
    }
    memcpy(buf, text.buf, n);
}

/* ---- listing ----------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the plugins of KIND in folder d; a file of the other kind is
 * skipped, and one of neither kind is refused in the controllers' list. */
struct visit {
    cupace_pacer_visit_fn pacer;
    cupace_stages_visit_fn stages;
    void *ctx;
};

static void visit_one(const struct visit *v, const char *file, const void *ops, const char *reason,
                  const char *shadowed_by)
{
    if (v->pacer)
        v->pacer(v->ctx, file, ops, reason, shadowed_by);
    else
        v->stages(v->ctx, file, ops, reason, shadowed_by);
}

static void scan_dir(const struct cupace_pacer_path *path, size_t d, const struct plugin_kind *kind,
                     const struct visit *v)
{
    DIR *dir = opendir(path->dirs[d]);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;

    if (!dir)
        return;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        char **more;
        if (len < 4 || strcmp(e->d_name + len - 3, ".so") != 0)
            continue;
        more = realloc(names, (n + 1) * sizeof *names);
        if (!more)
            break;
        names = more;
        names[n] = strdup(e->d_name);
        if (names[n])
            n++;
    }
    closedir(dir);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; i++) {
        char file[4096], first[4096], name[256], why[512];
        const char *shadow = NULL;
        const void *ops = NULL;
        const struct plugin_kind *other = kind == &pacer_kind ? &stage_kind : &pacer_kind;
        struct cupace_err err;
        void *dl = NULL;

        snprintf(file, sizeof file, "%s/%s", path->dirs[d], names[i]);
        snprintf(name, sizeof name, "%.*s", (int)(strlen(names[i]) - 3), names[i]);
        if (!is_regular_file(file))
            continue;
        for (size_t j = 0; j < d && !shadow; j++) {
            snprintf(first, sizeof first, "%s/%s", path->dirs[j], names[i]);
            if (is_regular_file(first))
                shadow = first;
        }
        if (exports(file, other->symbol) && !exports(file, kind->symbol)) {
            free(names[i]);
            continue;               /* the other kind's: listed apart */
        }
        if (!exports(file, kind->symbol) && kind != &pacer_kind) {
            free(names[i]);
            continue;               /* neither kind: refused in the controllers' list */
        }
        if (!cupace_is_identifier(name)) {
            snprintf(why, sizeof why, "its file name is not a plain %s name", kind->noun);
            visit_one(v, file, NULL, why, shadow);
        } else if (open_kind(file, kind, &dl, &ops, &err) < 0) {
            const char *reason = strstr(err.msg, ": ");

            reason = reason ? reason + 2 : err.msg;
            if (strncmp(reason, "refused: ", 9) == 0)
                reason += 9;            /* the listing says "refused" itself */
            visit_one(v, file, NULL, reason, shadow);
        } else if (strcmp(kind->name_of(ops), name) != 0) {
            snprintf(why, sizeof why, "the file calls itself '%s'; it must be named %s.so",
                     kind->name_of(ops), kind->name_of(ops));
            visit_one(v, file, NULL, why, shadow);
        } else {
            visit_one(v, file, ops, NULL, shadow);
        }
        if (dl)
            dlclose(dl);
        free(names[i]);
    }
    free(names);
}

static void scan(const struct cupace_pacer_path *path, const struct plugin_kind *kind,
                 const struct visit *v)
{
    for (size_t d = 0; d < path->ndirs; d++) {
        int dup = 0;
        for (size_t j = 0; j < d; j++)
            dup |= strcmp(path->dirs[j], path->dirs[d]) == 0;
        if (!dup)
            scan_dir(path, d, kind, v);
    }
}

void cupace_pacer_scan(const struct cupace_pacer_path *path, cupace_pacer_visit_fn found,
                       void *ctx)
{
    struct visit v = { found, NULL, ctx };

    scan(path, &pacer_kind, &v);
}

void cupace_stages_scan(const struct cupace_pacer_path *path, cupace_stages_visit_fn found,
                        void *ctx)
{
    struct visit v = { NULL, found, ctx };

    scan(path, &stage_kind, &v);
}

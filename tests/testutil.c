/* testutil.c -- see testutil.h. */
#include "config.h"
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[512];

const char *tu_dir(void)
{
    if (!scratch[0]) {
        snprintf(scratch, sizeof scratch, "tmp-check-%ld", (long)getpid());
        mkdir(scratch, 0700);
    }
    return scratch;
}

const char *tu_write(const char *name, const char *content)
{
    static char path[64][1024];
    static unsigned next;
    char *p = path[next++ % 64];
    FILE *fp;

    snprintf(p, 1024, "%s/%s", tu_dir(), name);
    fp = fopen(p, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(content, fp);
    fclose(fp);
    return p;
}

struct cupace_config *tu_config(const char *ini, struct cupace_err *err)
{
    return cupace_config_load(tu_write("test.ini", ini), NULL, 0, err);
}

const char *tu_plugins_dir(void)
{
    const char *d = getenv("CUPACE_TEST_SHIPPED");
    return d ? d : "../plugins/.libs";
}

const char *tu_test_plugins_dir(void)
{
    const char *d = getenv("CUPACE_TEST_PLUGINS");
    return d ? d : "plugins/.libs";
}

int tu_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

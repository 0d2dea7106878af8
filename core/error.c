/* error.c -- building error messages once, where the context is known. */
#include "config.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cupace_err_set(struct cupace_err *err, const char *fmt, ...)
{
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int cupace_err_prefix(struct cupace_err *err, const char *fmt, ...)
{
    char prefix[512], old[sizeof err->msg];
    va_list ap;

    if (!err)
        return -1;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%.400s: %.600s", prefix, old);
    return -1;
}

# CUPACE_CHECK_CUDA
# -----------------
# Looks for nvcc: --with-cuda=DIR uses DIR/bin/nvcc, --without-cuda leaves
# CUDA out, and the default tries nvcc on PATH, then /usr/local/cuda/bin.
# Sets NVCC, CUDA_HOME, CUDA_CFLAGS, CUDA_LIBS, cupace_have_cuda (yes|no)
# and cupace_cuda_summary (a line for the configure summary).
# An explicit --with-cuda that finds nothing is an error; the default is not.
AC_DEFUN([CUPACE_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [build the CUDA backend (DIR: the CUDA toolkit; default: nvcc on PATH or /usr/local/cuda)])],
    [], [with_cuda=check])
  AC_ARG_VAR([NVCC], [the CUDA compiler])
  AC_ARG_VAR([NVCCFLAGS], [flags for the CUDA compiler])
  cupace_have_cuda=no
  cupace_cuda_summary="no (--without-cuda)"
  AS_CASE([$with_cuda],
    [no], [],
    [yes|check], [
      AS_IF([test -z "$NVCC"], [AC_PATH_PROG([NVCC], [nvcc], [], [$PATH:/usr/local/cuda/bin])])
    ],
    [
      AS_IF([test -x "$with_cuda/bin/nvcc"], [NVCC="$with_cuda/bin/nvcc"],
            [AC_MSG_ERROR([--with-cuda=$with_cuda: no executable $with_cuda/bin/nvcc])])
    ])
  AS_IF([test "x$with_cuda" != xno], [
    AS_IF([test -n "$NVCC"], [
      CUDA_HOME=`AS_DIRNAME(["$NVCC"])`
      CUDA_HOME=`AS_DIRNAME(["$CUDA_HOME"])`
      AC_MSG_CHECKING([whether $NVCC compiles a CUDA unit])
      cat > conftest.cu <<_CUPACE_EOF
#include <cuda_runtime.h>
int cupace_conftest(void) { int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? n : -1; }
_CUPACE_EOF
      AS_IF([$NVCC -Xcompiler -fPIC -c conftest.cu -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
        [AC_MSG_RESULT([yes])
         cupace_have_cuda=yes
         cupace_cuda_summary="yes ($NVCC)"],
        [AC_MSG_RESULT([no])])
      rm -f conftest.cu conftest.$OBJEXT
    ])
    AS_IF([test "x$cupace_have_cuda" = xno], [
      AS_IF([test "x$with_cuda" = xcheck],
        [cupace_cuda_summary="no (nvcc not found; --with-cuda=DIR to point at it)"],
        [AC_MSG_ERROR([--with-cuda given, but no working nvcc was found])])
    ])
  ])
  AS_IF([test "x$cupace_have_cuda" = xyes], [
    CUDA_CFLAGS="-I$CUDA_HOME/include"
    # The static runtime finds the driver (libcuda.so) at run time, so the
    # engine starts on machines without a GPU or driver and says so.
    CUDA_LIBS="-L$CUDA_HOME/lib64 -lcudart_static -lrt"
    AC_DEFINE([HAVE_CUDA], [1], [Define if the CUDA backend is built])
  ])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
])

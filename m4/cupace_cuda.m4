dnl SPDX-License-Identifier: MIT OR Apache-2.0
# CUPACE_CHECK_CUDA
# -----------------
# Looks for nvcc: --with-cuda=DIR uses DIR/bin/nvcc, --without-cuda leaves
# CUDA out, and the default tries nvcc on PATH, then /usr/local/cuda/bin.
# A compiler alone is not enough: the runtime library must link too, so the
# macro asks nvcc where it links from (its --dryrun LIBRARIES line), adds the
# usual toolkit layouts, and proves a link with the C compiler, static
# runtime first, then the shared one (with an rpath).
# Sets NVCC, CUDA_HOME, CUDA_CFLAGS, CUDA_LIBS, cupace_have_cuda (yes|no)
# and cupace_cuda_summary (a line for the configure summary).
# An explicit --with-cuda that cannot build is an error; the default is not.
AC_DEFUN([CUPACE_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
      [build the CUDA backend (DIR: the CUDA toolkit; default: nvcc on PATH or /usr/local/cuda)])],
    [], [with_cuda=check])
  AC_ARG_VAR([NVCC], [the CUDA compiler])
  AC_ARG_VAR([NVCCFLAGS], [flags for the CUDA compiler])
  cupace_have_cuda=no
  cupace_cuda_summary="no (--without-cuda)"
  cupace_cuda_why=
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
    AS_IF([test -z "$NVCC"], [cupace_cuda_why="nvcc not found; --with-cuda=DIR to point at it"])
  ])
  AS_IF([test "x$with_cuda" != xno && test -n "$NVCC"], [
    CUDA_HOME=`AS_DIRNAME(["$NVCC"])`
    CUDA_HOME=`AS_DIRNAME(["$CUDA_HOME"])`
    AC_MSG_CHECKING([whether $NVCC compiles a CUDA unit])
    cat > conftest.cu <<_CUPACE_EOF
#include <cuda_runtime.h>
int cupace_conftest(void) { int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? n : -1; }
_CUPACE_EOF
    AS_IF([$NVCC -Xcompiler -fPIC -c conftest.cu -o conftest.$OBJEXT >&AS_MESSAGE_LOG_FD 2>&1],
      [AC_MSG_RESULT([yes])
       # Where nvcc itself would link from, stubs aside.
       cupace_cuda_nvcc_dirs=`$NVCC --dryrun -o conftest conftest.cu 2>&1 |
         $SED -n 's/^#\$ LIBRARIES=//p' | tr ' ' '\n' | tr -d '"' |
         $SED -n '/\/stubs$/d; s/^-L//p'`
       cupace_cuda_cflags=`$NVCC --dryrun -c conftest.cu 2>&1 |
         $SED -n 's/^#\$ INCLUDES=//p' | tr ' ' '\n' | tr -d '"' | $SED -n '/^-I/p' | tr '\n' ' '`
       AS_IF([test -z "$cupace_cuda_cflags"], [cupace_cuda_cflags="-I$CUDA_HOME/include"])
       AC_MSG_CHECKING([for the CUDA runtime library])
       cupace_cuda_libs=
       cupace_save_LIBS=$LIBS
       for cupace_dir in $cupace_cuda_nvcc_dirs "$CUDA_HOME/lib64" "$CUDA_HOME/lib" \
                         "$CUDA_HOME"/targets/*/lib; do
         test -d "$cupace_dir" || continue
         for cupace_try in "-L$cupace_dir -lcudart_static -lrt -lpthread -ldl" \
                           "-L$cupace_dir -Wl,-rpath,$cupace_dir -lcudart"; do
           LIBS="$cupace_try $cupace_save_LIBS"
           AC_LINK_IFELSE([AC_LANG_PROGRAM([[int cudaGetDeviceCount(int *);]],
                                           [[int n = 0; return cudaGetDeviceCount(&n);]])],
             [cupace_cuda_libs=$cupace_try])
           test -n "$cupace_cuda_libs" && break
         done
         test -n "$cupace_cuda_libs" && break
       done
       LIBS=$cupace_save_LIBS
       AS_IF([test -n "$cupace_cuda_libs"],
         [AC_MSG_RESULT([$cupace_cuda_libs])
          cupace_have_cuda=yes
          cupace_cuda_summary="yes ($NVCC)"],
         [AC_MSG_RESULT([no])
          cupace_cuda_why="$NVCC works, but libcudart does not link from any of: $cupace_cuda_nvcc_dirs $CUDA_HOME/lib64 $CUDA_HOME/lib"])
      ],
      [AC_MSG_RESULT([no])
       cupace_cuda_why="$NVCC cannot compile a unit that includes cuda_runtime.h (see config.log)"])
    rm -f conftest.cu conftest.$OBJEXT
  ])
  AS_IF([test "x$with_cuda" != xno && test "x$cupace_have_cuda" = xno], [
    AS_IF([test "x$with_cuda" = xcheck],
      [cupace_cuda_summary="no ($cupace_cuda_why)"
       AC_MSG_WARN([building without the CUDA backend: $cupace_cuda_why])],
      [AC_MSG_ERROR([--with-cuda given, but: $cupace_cuda_why])])
  ])
  AS_IF([test "x$cupace_have_cuda" = xyes], [
    CUDA_CFLAGS=$cupace_cuda_cflags
    # The static runtime finds the driver (libcuda.so) at run time, so the
    # engine starts on machines without a GPU or driver and says so.
    CUDA_LIBS=$cupace_cuda_libs
    AC_DEFINE([HAVE_CUDA], [1], [Define if the CUDA backend is built])
  ])
  AC_SUBST([CUDA_HOME])
  AC_SUBST([CUDA_CFLAGS])
  AC_SUBST([CUDA_LIBS])
])

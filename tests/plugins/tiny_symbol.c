/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: exports a symbol of 4 bytes only. */
#include <stdint.h>

/* clang's ASan pads a global with a redzone and counts the pad in its
 * symbol's size (32 bytes for these 4), so that the host, trusting the
 * size, read into the pad: unpadded, the size says 4 in any build */
#if defined(__clang__)
__attribute__((no_sanitize("address")))
#endif
const uint32_t cupace_pacer_entry = 1;

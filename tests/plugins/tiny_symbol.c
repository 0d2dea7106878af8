/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only controller: exports a symbol of 4 bytes only. */
#include <stdint.h>
const uint32_t cupace_pacer_entry = 1;

/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Test-only shared object: no cupace_pacer_entry at all. */
int not_a_controller(void);
int not_a_controller(void) { return 42; }

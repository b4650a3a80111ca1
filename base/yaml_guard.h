/* What the project checks in a YAML text before libfyaml 0.7.12 (Debian 12's) reads it:
 * that library spins forever on some malformed UTF-8 after a '%', and crashes while it
 * cleans up after refusing a tab that indents a block indicator inside an explicit key
 * ("? a: <TAB>- x" writes through a bad pointer in fy_parse_cleanup; found by fuzz_config). Such
 * texts are refused here first, with a reason the caller reports. */
#pragma once

#include <stddef.h>

#include <libfyaml.h>

/* The offset of the first byte of text that libfyaml must not be given, or len when there
 * is none; *ret_why (when not NULL) is set to the reason on a refusal. Refused: bytes that
 * are not well-formed UTF-8, and a tab followed, after spaces or tabs, by an indicator
 * that libfyaml takes as block indentation ('?', ':', '|', '>', or '-' before anything but
 * printable ASCII). The second rule holds in comments and quoted scalars too, where
 * libfyaml would not mind, so that no reading of the text by the scanner can reach the
 * crash; there, a tab is written as "\t" inside double quotes. */
size_t tj_yaml_refused_at(const char *text, size_t len, const char **ret_why);

/* The first error libfyaml collected in diag (after fy_diag_set_collect_errors, which every
 * reader sets: drawing an error's source line is what crashes under lines of many tabs),
 * past the warnings that may come before it (an unknown directive); NULL if none. */
struct fy_diag_error *tj_yaml_first_error(struct fy_diag *diag);

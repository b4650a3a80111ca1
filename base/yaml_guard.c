#include "base/yaml_guard.h"

#include <stdbool.h>
#include <string.h>

#include "base/utf8.h"

/* Whether libfyaml may take the byte at offset i, after a '-', for a blank, a line break or
 * the end (fyp_is_blankz): anything but printable ASCII, so that NUL and the line breaks of
 * YAML 1.1 (NEL, LS, PS, which start with a byte above 0x7f) count too. */
static bool may_be_blankz(const char *text, size_t len, size_t i)
{
	return i >= len || !(text[i] > ' ' && text[i] < 0x7f);
}

/* Whether the tab at offset i is followed, past spaces and tabs, by what libfyaml's scanner
 * refuses as block indentation (fy_scan_to_next_token: "cannot use tab for indentation of
 * block entry"). */
static bool tab_indents_indicator(const char *text, size_t len, size_t i)
{
	while (i < len && (text[i] == ' ' || text[i] == '\t'))
		i++;
	if (i >= len)
		return false;
	if (text[i] == '-')
		return may_be_blankz(text, len, i + 1);
	return strchr("?:|>", text[i]) != NULL;
}

static const char tab_why[] = "a tab before '-', '?', ':', '|' or '>' "
                              "(YAML indents with spaces; in quotes, write \\t)";

size_t tj_yaml_refused_at(const char *text, size_t len, const char **ret_why)
{
	size_t bad = tj_utf8_invalid_at(text, len);
	const char *why = "not valid UTF-8";

	for (size_t i = 0; i < bad; i++) {
		if (text[i] == '\t' && tab_indents_indicator(text, len, i + 1)) {
			bad = i;
			why = tab_why;
			break;
		}
	}
	if (bad < len && ret_why)
		*ret_why = why;
	return bad;
}

struct fy_diag_error *tj_yaml_first_error(struct fy_diag *diag)
{
	void *iter = NULL;
	struct fy_diag_error *e;

	while ((e = fy_diag_errors_iterate(diag, &iter)) && e->type != FYET_ERROR)
		;
	return e;
}

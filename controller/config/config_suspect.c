#include "controller/config/config_suspect_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/config/config_walltime_internal.h"

#define SECTION "suspectNodes"

int tj_config_parse_suspect(const struct tj_config_parser *p, struct fy_node *root,
                            struct tj_config *config)
{
	static const char *const fields[] = { "enabled", "jobs", "window", "exitCodes", NULL };
	struct tj_suspect_policy *policy;
	int line, r;
	struct fy_node *node = tj_config_section(root, SECTION, &line);

	if (!node)
		return 0;
	r = tj_config_check_mapping(p, node, line, SECTION, fields,
	                            "enabled, jobs, window, exitCodes");
	if (r < 0)
		return r;
	policy = malloc(sizeof(*policy));
	if (!policy)
		return -ENOMEM;
	*policy = *tj_config_suspect(NULL);
	policy->exit_codes = NULL;
	policy->n_exit_codes = 0;
	config->suspect = policy;
	line = tj_config_line(node, line);
	if ((r = tj_config_field_bool(p, node, line, SECTION, "enabled", &policy->enabled)) < 0 ||
	    (r = tj_config_field_int(p, node, line, SECTION, "jobs", 2, 100, &policy->jobs)) < 0 ||
	    (r = tj_config_field_walltime(p, node, line, SECTION, "window",
	                                  &policy->window_seconds)) < 0)
		return r;
	/* A minute at least, or two failures of one crash could never meet in it; a week at
	 * most, or a node would stay charged with failures long mended. */
	if (policy->window_seconds < 60 || policy->window_seconds > 7 * 86400)
		return tj_config_fail(p, tj_config_field_line(node, "window", line),
		                      SECTION ".window", "must be between 1m and 7d");
	return tj_config_field_exit_codes(p, node, line, SECTION ".exitCodes", "exitCodes",
	                                  tj_config_suspect(NULL)->exit_codes,
	                                  tj_config_suspect(NULL)->n_exit_codes,
	                                  &policy->exit_codes, &policy->n_exit_codes);
}

#include "controller/config/config_walltime_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/policy/walltime.h"

static const char *const walltime_fields[] = {
	"defaultWalltime", "maxWalltime", "warningSeconds", "gpuClasses", "namespaces", NULL,
};
static const char *const class_fields[] = { "defaultWalltime", "maxWalltime", NULL };
static const char *const namespace_fields[] = { "namespace", "gpuClass", "defaultWalltime",
	                                        "maxWalltime", NULL };

int tj_config_field_walltime(const struct tj_config_parser *p, struct fy_node *mapping, int line,
                             const char *path, const char *key, long long *ret)
{
	struct fy_node_pair *pair = tj_config_find_pair(mapping, key);
	char sub[160], *text = NULL;
	int r;

	if (!pair || tj_config_is_null(fy_node_pair_value(pair)))
		return 0;
	snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", key);
	line = tj_config_field_line(mapping, key, line);
	r = tj_config_scalar_dup(p, fy_node_pair_value(pair), line, sub, 32, &text);
	if (r < 0)
		return r;
	if (tj_walltime_parse(text, ret) < 0)
		r = tj_config_fail(
		        p, line, sub,
		        "\"%s\" is not a walltime (seconds, or d, h, m, s in that order, "
		        "like 90m or 1d12h) between 1s and 366d",
		        text);
	free(text);
	return r;
}

/* defaultWalltime and maxWalltime of one entry. */
static int parse_limits(const struct tj_config_parser *p, struct fy_node *node, int line,
                        const char *path, struct tj_walltime_limits *limits)
{
	int r = tj_config_field_walltime(p, node, line, path, "defaultWalltime",
	                                 &limits->default_seconds);

	if (r == 0)
		r = tj_config_field_walltime(p, node, line, path, "maxWalltime",
		                             &limits->max_seconds);
	if (r == 0 && limits->default_seconds && limits->max_seconds &&
	    limits->default_seconds > limits->max_seconds)
		r = tj_config_fail(p, line, path,
		                   "defaultWalltime (%lld s) must not be longer than maxWalltime "
		                   "(%lld s)",
		                   limits->default_seconds, limits->max_seconds);
	return r;
}

static int add_override(struct tj_walltime_policy *w, struct tj_walltime_override **ret)
{
	struct tj_walltime_override *o;

	o = realloc(w->overrides, (w->n_overrides + 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	w->overrides = o;
	*ret = &o[w->n_overrides++];
	**ret = (struct tj_walltime_override){ 0 };
	return 0;
}

static int parse_classes(const struct tj_config_parser *p, struct fy_node *node, int line,
                         const struct tj_config *config, struct tj_walltime_policy *w)
{
	const char *path = "walltime.gpuClasses";
	void *iter = NULL;
	struct fy_node_pair *pair;
	int r = tj_config_check_mapping(p, node, line, path, NULL, NULL);

	if (r < 0)
		return r;
	while ((pair = fy_node_mapping_iterate(node, &iter))) {
		struct fy_node *key = fy_node_pair_key(pair);
		int key_line = tj_config_line(key, line);
		struct tj_walltime_override *o;
		char sub[96];

		r = add_override(w, &o);
		if (r < 0)
			return r;
		r = tj_config_scalar_dup(p, key, key_line, path, TJ_LABEL_NAME_MAX, &o->gpu_class);
		if (r < 0)
			return r;
		if (!tj_config_find_class(config, o->gpu_class))
			return tj_config_fail(p, key_line, path, "\"%s\" is not one of gpuClasses",
			                      o->gpu_class);
		snprintf(sub, sizeof(sub), "%s.%s", path, o->gpu_class);
		r = tj_config_check_mapping(p, fy_node_pair_value(pair), key_line, sub,
		                            class_fields, "defaultWalltime, maxWalltime");
		if (r == 0)
			r = parse_limits(p, fy_node_pair_value(pair), key_line, sub, &o->limits);
		if (r < 0)
			return r;
	}
	return 0;
}

static int parse_namespace(const struct tj_config_parser *p, struct fy_node *node, int line,
                           const char *path, const struct tj_config *config,
                           struct tj_walltime_override *o)
{
	int r = tj_config_check_mapping(p, node, line, path, namespace_fields,
	                                "namespace, gpuClass, defaultWalltime, maxWalltime");

	if (r < 0)
		return r;
	line = tj_config_line(node, line);
	r = tj_config_field_string(p, node, line, path, "namespace", true, TJ_LABEL_NAME_MAX,
	                           &o->namespace);
	if (r < 0)
		return r;
	if (!tj_config_valid_dns_label(o->namespace))
		return tj_config_fail(p, tj_config_field_line(node, "namespace", line), path,
		                      "namespace \"%s\" is not a DNS label", o->namespace);
	r = tj_config_field_string(p, node, line, path, "gpuClass", false, TJ_LABEL_NAME_MAX,
	                           &o->gpu_class);
	if (r < 0)
		return r;
	if (o->gpu_class && !tj_config_find_class(config, o->gpu_class))
		return tj_config_fail(p, tj_config_field_line(node, "gpuClass", line), path,
		                      "gpuClass \"%s\" is not one of gpuClasses", o->gpu_class);
	return parse_limits(p, node, line, path, &o->limits);
}

static bool same(const char *a, const char *b)
{
	return a && b ? strcmp(a, b) == 0 : a == b;
}

static int parse_namespaces(const struct tj_config_parser *p, struct fy_node *node, int line,
                            const struct tj_config *config, struct tj_walltime_policy *w)
{
	struct fy_node *seq = NULL, *item;
	int seq_line = line, r;
	size_t first = w->n_overrides;
	void *iter = NULL;

	r = tj_config_field_sequence(p, node, line, "walltime.namespaces", "namespaces",
	                             TJ_CONFIG_MAX_WALLTIME_OVERRIDES, &seq, &seq_line);
	if (r < 0 || !seq)
		return r;
	for (size_t i = 0; (item = fy_node_sequence_iterate(seq, &iter)); i++) {
		struct tj_walltime_override *o;
		int item_line = tj_config_line(item, seq_line);
		char sub[48];

		snprintf(sub, sizeof(sub), "walltime.namespaces[%zu]", i);
		r = add_override(w, &o);
		if (r == 0)
			r = parse_namespace(p, item, item_line, sub, config, o);
		if (r < 0)
			return r;
		for (size_t j = first; j + 1 < w->n_overrides; j++)
			if (same(w->overrides[j].namespace, o->namespace) &&
			    same(w->overrides[j].gpu_class, o->gpu_class))
				return tj_config_fail(p, item_line, sub,
				                      "a second entry for namespace \"%s\"%s%s "
				                      "(also namespaces[%zu])",
				                      o->namespace,
				                      o->gpu_class ? " and gpuClass " : "",
				                      o->gpu_class ? o->gpu_class : "", j - first);
	}
	return 0;
}

int tj_config_parse_walltime(const struct tj_config_parser *p, struct fy_node *root,
                             struct tj_config *config)
{
	struct tj_walltime_policy *w;
	struct fy_node_pair *pair;
	int line, r;
	struct fy_node *node = tj_config_section(root, "walltime", &line);

	if (!node)
		return 0;
	w = config->walltime = calloc(1, sizeof(*config->walltime));
	if (!w)
		return -ENOMEM;
	w->warning_seconds = tj_config_walltime(NULL)->warning_seconds;
	r = tj_config_check_mapping(p, node, line, "walltime", walltime_fields,
	                            "defaultWalltime, maxWalltime, warningSeconds, gpuClasses, "
	                            "namespaces");
	if (r == 0)
		r = parse_limits(p, node, line, "walltime", &w->cluster);
	if (r == 0)
		r = tj_config_field_int(p, node, line, "walltime", "warningSeconds", 0,
		                        TJ_WALLTIME_WARNING_MAX, &w->warning_seconds);
	if (r < 0)
		return r;
	pair = tj_config_find_pair(node, "gpuClasses");
	if (pair && !tj_config_is_null(fy_node_pair_value(pair))) {
		r = parse_classes(p, fy_node_pair_value(pair),
		                  tj_config_line(fy_node_pair_key(pair), line), config, w);
		if (r < 0)
			return r;
	}
	return parse_namespaces(p, node, line, config, w);
}

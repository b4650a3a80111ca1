#include "reconcilers/usage/gpu_use.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "informers/resources.h"

int tj_gpu_class_of_node(const struct tj_config *config, const struct tj_node *node)
{
	for (size_t i = 0; config && i < config->n_classes; i++) {
		const struct tj_gpu_class *cls = &config->classes[i];
		bool match = !cls->arch || (node->arch && strcmp(node->arch, cls->arch) == 0);

		for (size_t k = 0; match && k < cls->n_node_labels; k++) {
			const char *v = tj_node_label(node, cls->node_labels[k].key);

			match = v && strcmp(v, cls->node_labels[k].value) == 0;
		}
		if (match)
			return (int)i;
	}
	return -1;
}

/* By job (namespace, then TrainJob label), newest attempt first. */
static int by_job(const void *a, const void *b)
{
	const struct tj_pod *x = *(const struct tj_pod *const *)a;
	const struct tj_pod *y = *(const struct tj_pod *const *)b;
	int c = strcmp(x->namespace, y->namespace);

	if (c == 0)
		c = strcmp(x->trainjob, y->trainjob);
	if (c == 0)
		c = (y->attempt > x->attempt) - (y->attempt < x->attempt);
	return c;
}

static bool same_job(const struct tj_pod *x, const struct tj_pod *y)
{
	return strcmp(x->namespace, y->namespace) == 0 && strcmp(x->trainjob, y->trainjob) == 0;
}

static void count_pod(const struct tj_config *config, const struct tj_pod *p, bool partial,
                      tj_gpu_use_node_fn node, void *ctx, struct tj_gpu_use *use)
{
	const char *name = p->node_name ? p->node_name : p->pinned_node;
	const struct tj_node *n = name ? node(name, ctx) : NULL;
	int cls = n ? tj_gpu_class_of_node(config, n) : -1;
	int64_t gpus;

	if (cls < 0)
		return;
	gpus = tj_pod_resources_extended(&p->requests, config->classes[cls].resource);
	use[cls].requested += gpus;
	if (p->phase != TJ_POD_RUNNING)
		return;
	use[cls].running += gpus;
	if (partial)
		use[cls].idle += gpus;
}

int tj_gpu_use_count(const struct tj_config *config, const struct tj_pod *const *pods,
                     size_t n_pods, tj_gpu_use_node_fn node, void *ctx, struct tj_gpu_use *use)
{
	const struct tj_pod **live = malloc((n_pods ? n_pods : 1) * sizeof(*live));
	size_t n = 0;

	if (!live)
		return -ENOMEM;
	for (size_t i = 0; i < n_pods; i++)
		if (pods[i]->trainjob && !pods[i]->terminated && !pods[i]->kept)
			live[n++] = pods[i];
	qsort(live, n, sizeof(*live), by_job);
	memset(use, 0, config->n_classes * sizeof(*use));
	for (size_t start = 0, end; start < n; start = end) {
		size_t current = start; /* the newest attempt's pods: [start, current) */
		bool partial = false;

		for (end = start; end < n && same_job(live[start], live[end]); end++)
			;
		while (current < end && live[current]->attempt == live[start]->attempt)
			partial |= live[current++]->phase != TJ_POD_RUNNING;
		for (size_t i = start; i < end; i++)
			count_pod(config, live[i], partial && i < current, node, ctx, use);
	}
	free(live);
	return 0;
}

/* kubectl sinfo: the nodes of each GPU class as Slurm's sinfo lists the nodes of its
 * partitions (cli/sinfo_table.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cluster_config.h"
#include "cli/plugin.h"
#include "cli/sinfo_table.h"
#include "cli/slurm_jobs.h"
#include "informers/reflector.h"

struct state {
	enum tj_sinfo_view view;
	const char *partition;  /* borrowed from argv; NULL: every one */
	const char *config_map; /* borrowed from argv; NULL: the default */
};

static int on_option(void *userdata, const char *arg, const char *next, char *err, size_t errlen)
{
	struct state *s = userdata;
	int n;

	if (tj_plugin_match_flag(arg, 'N', "Node")) {
		s->view = TJ_SINFO_NODES;
		return 1;
	}
	if (tj_plugin_match_flag(arg, 'R', "list-reasons")) {
		s->view = TJ_SINFO_REASONS;
		return 1;
	}
	n = tj_plugin_match(arg, next, 'p', "partition", &s->partition);
	if (n < 0)
		snprintf(err, errlen, "-p needs a partition (a GPU class)");
	if (n != 0)
		return n;
	n = tj_plugin_match(arg, next, 0, "config-map", &s->config_map);
	if (n < 0)
		snprintf(err, errlen, "--config-map needs NAMESPACE/NAME");
	return n;
}

static const struct tj_plugin_spec spec = {
	.name = "sinfo",
	.synopsis = "[-N | -R] [-p PARTITION] [--config-map NAMESPACE/NAME]",
	.summary = "Lists the nodes of each GPU class (a partition) as Slurm's sinfo does, by\n"
	           "state: idle, mixed, allocated (pods hold none, some, all of its GPUs),\n"
	           "draining, drained (cordoned, flagged by a GPU health checker or tainted:\n"
	           "with or without pods still on it), down (NotReady or not responding), and\n"
	           "suspect (ranks of several TrainJobs failed on it: the taint\n"
	           "trainjob.flame.dev/suspect). GPUS(A/I/O/T) counts the GPUs allocated, idle,\n"
	           "other (on nodes that take no new pods) and in total.",
	.options_help = "  -N, --Node                 one line per node\n"
	                "  -R, --list-reasons         why nodes take no new pods, since when and\n"
	                "                             who says so\n"
	                "  -p, --partition CLASS      only that GPU class\n"
	                "      --config-map NS/NAME   the controller's config (default\n"
	                "                             " TJ_CLUSTER_CONFIG_DEFAULT ")\n",
	.on_option = on_option,
};

/* Projects the items of a list with project (tj_node_project, tj_pod_project) into a new
 * array; those that are not what they should be are skipped. */
static int project_all(const cJSON *items, tj_project_fn project, void ***ret, size_t *ret_n)
{
	void **objs = calloc((size_t)cJSON_GetArraySize(items) + 1, sizeof(*objs));
	const cJSON *item;
	size_t n = 0;

	if (!objs)
		return -ENOMEM;
	cJSON_ArrayForEach(item, items) if (project(item, &objs[n]) == 0) n++;
	*ret = objs;
	*ret_n = n;
	return 0;
}

int main(int argc, char **argv)
{
	struct state s = { .view = TJ_SINFO_SUMMARY };
	struct tj_ref nodes_ref = { .resource = &tj_resource_nodes };
	struct tj_ref pods_ref = { .resource = &tj_resource_pods };
	struct tj_config *config = NULL;
	const struct tj_config *classes;
	cJSON *node_items = NULL, *pod_items = NULL;
	void **nodes = NULL, **pods = NULL;
	size_t n_nodes = 0, n_pods = 0;
	struct tj_sinfo info = { 0 };
	struct tj_plugin p;
	int rc;

	rc = tj_plugin_parse(&p, &spec, &s, argc, argv, stdout, stderr);
	if (rc != TJ_PLUGIN_GO_ON)
		return rc;
	if (p.n_operands > 0) {
		tj_plugin_error(&p, "takes no operands ('%s'): filter with -p", p.operands[0]);
		return TJ_PLUGIN_EXIT_USAGE;
	}
	rc = TJ_PLUGIN_EXIT_FAILURE;
	/* Pods that ended hold no GPUs: the API server leaves them out. */
	if (tj_plugin_connect(&p) < 0 ||
	    tj_cluster_config_fetch(&p, s.config_map ? s.config_map : TJ_CLUSTER_CONFIG_DEFAULT,
	                            s.config_map != NULL, &config) < 0 ||
	    tj_slurm_list_all(&p, &nodes_ref, NULL, NULL, &node_items) < 0 ||
	    tj_slurm_list_all(&p, &pods_ref, NULL, "status.phase!=Succeeded,status.phase!=Failed",
	                      &pod_items) < 0)
		goto out;
	classes = config && config->n_classes ? config : tj_config_builtin();
	if (s.partition && !tj_config_find_class(classes, s.partition)) {
		tj_plugin_error(&p, "no partition (GPU class) '%s'", s.partition);
		goto out;
	}
	if (project_all(node_items, tj_node_project, &nodes, &n_nodes) < 0 ||
	    project_all(pod_items, tj_pod_project, &pods, &n_pods) < 0 ||
	    tj_sinfo_build(classes, (const struct tj_node *const *)nodes, n_nodes,
	                   (const struct tj_pod *const *)pods, n_pods, (int64_t)time(NULL),
	                   &info) < 0 ||
	    tj_sinfo_print(stdout, &info, s.view, s.partition) < 0) {
		tj_plugin_error(&p, "%s", strerror(ENOMEM));
		goto out;
	}
	rc = TJ_PLUGIN_EXIT_SUCCESS;
out:
	tj_sinfo_clear(&info);
	for (size_t i = 0; i < n_nodes; i++)
		tj_node_free(nodes[i]);
	for (size_t i = 0; i < n_pods; i++)
		tj_pod_free(pods[i]);
	free(nodes);
	free(pods);
	cJSON_Delete(node_items);
	cJSON_Delete(pod_items);
	tj_config_free(config);
	tj_plugin_close(&p);
	return rc;
}

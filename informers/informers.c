#include "informers/informers.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informers/node.h"
#include "informers/pod.h"
#include "kube/watch.h"

/* ---- the list-watch of a kube client ---- */

static int kube_list(void *ctx, const struct tj_list_options *opts, tj_response_fn fn,
                     void *userdata, void **ret_call)
{
	struct tj_kube_listwatch *klw = ctx;
	struct tj_request *req;
	int r = tj_kube_list(klw->client, &klw->ref, opts, fn, userdata, &req);

	if (r == 0)
		*ret_call = req;
	return r;
}

static void kube_cancel_list(void *call)
{
	tj_request_cancel(call);
}

static int kube_watch(void *ctx, const struct tj_watch_options *opts, tj_watch_event_fn on_event,
                      tj_watch_done_fn on_done, void *userdata, void **ret_call)
{
	struct tj_kube_listwatch *klw = ctx;
	struct tj_watch *w;
	int r = tj_watch_start(klw->client, &klw->ref, opts, on_event, on_done, userdata, &w);

	if (r == 0)
		*ret_call = w;
	return r;
}

static void kube_cancel_watch(void *call)
{
	tj_watch_cancel(call);
}

struct tj_listwatch tj_listwatch_kube(struct tj_kube_listwatch *klw)
{
	return (struct tj_listwatch){
		.list = kube_list,
		.cancel_list = kube_cancel_list,
		.watch = kube_watch,
		.cancel_watch = kube_cancel_watch,
		.ctx = klw,
	};
}

/* ---- the set ---- */

static int add_informer(uv_loop_t *loop, struct tj_informers *inf, size_t slot,
                        const struct tj_informers_config *config, const struct tj_resource *res,
                        const struct tj_informer_config *ic, const char *selector,
                        struct tj_reflector **ret)
{
	struct tj_kube_listwatch *klw = &inf->lw[slot];
	struct tj_reflector_config rc = {
		.name = res->plural,
		.label_selector = selector,
		.project = ic->project,
		.store_ops = ic->ops,
		.handlers = ic->handlers,
		.seed = config->seed ? config->seed + (uint32_t)slot : 0,
		.streaming_list = !config->paginated_lists,
		.turns = &inf->turns,
	};

	if (!ic->project)
		return 0;
	klw->client = config->client;
	klw->ref = (struct tj_ref){
		.resource = res,
		.namespace = res->namespaced ? inf->namespace : NULL,
	};
	rc.lw = tj_listwatch_kube(klw);
	return tj_reflector_new(loop, &rc, ret);
}

int tj_informers_new(uv_loop_t *loop, const struct tj_informers_config *config,
                     struct tj_informers **ret)
{
	struct tj_informer_config pods = config->pods, nodes = config->nodes;
	struct tj_informers *inf;
	int r;

	if (!pods.project) {
		pods.project = tj_pod_project;
		pods.ops = &tj_pod_store_ops;
	}
	if (!nodes.project) {
		nodes.project = tj_node_project;
		nodes.ops = &tj_node_store_ops;
	}
	inf = calloc(1, sizeof(*inf));
	if (!inf)
		return -ENOMEM;
	if (config->namespace) {
		inf->namespace = strdup(config->namespace);
		if (!inf->namespace) {
			r = -ENOMEM;
			goto fail;
		}
	}
	if ((r = add_informer(loop, inf, 0, config, &tj_resource_trainjobs, &config->trainjobs,
	                      NULL, &inf->trainjobs)) < 0 ||
	    (r = add_informer(loop, inf, 1, config, &tj_resource_trainingruntimes,
	                      &config->training_runtimes, NULL, &inf->training_runtimes)) < 0 ||
	    (r = add_informer(loop, inf, 2, config, &tj_resource_clustertrainingruntimes,
	                      &config->cluster_training_runtimes, NULL,
	                      &inf->cluster_training_runtimes)) < 0 ||
	    (r = add_informer(loop, inf, 3, config, &tj_resource_pods, &pods, NULL, &inf->pods)) <
	            0 ||
	    (r = add_informer(loop, inf, 4, config, &tj_resource_nodes, &nodes, NULL,
	                      &inf->nodes)) < 0 ||
	    (r = add_informer(loop, inf, 5, config, &tj_resource_priorityclasses,
	                      &config->priority_classes, NULL, &inf->priority_classes)) < 0 ||
	    (r = add_informer(loop, inf, 6, config, &tj_resource_kueue_workloads,
	                      &config->workloads, NULL, &inf->workloads)) < 0 ||
	    (r = add_informer(loop, inf, 7, config, &tj_resource_resourcequotas,
	                      &config->resource_quotas, NULL, &inf->resource_quotas)) < 0 ||
	    (r = add_informer(loop, inf, 8, config, &tj_resource_configmaps, &config->config_maps,
	                      config->config_map_selector, &inf->config_maps)) < 0)
		goto fail;
	*ret = inf;
	return 0;

fail:
	tj_informers_free(inf);
	return r;
}

#define N_INFORMERS 9

/* The reflectors of the set, NULL where one is left out, in the order they start: their
 * streaming lists take turns in it, and the pods, by far the most, come last, so that the
 * small lists are not held up behind them. */
static void list_all(const struct tj_informers *inf, struct tj_reflector **all)
{
	all[0] = inf->trainjobs;
	all[1] = inf->training_runtimes;
	all[2] = inf->cluster_training_runtimes;
	all[3] = inf->nodes;
	all[4] = inf->priority_classes;
	all[5] = inf->workloads;
	all[6] = inf->resource_quotas;
	all[7] = inf->config_maps;
	all[8] = inf->pods;
}

int tj_informers_start(struct tj_informers *inf)
{
	struct tj_reflector *all[N_INFORMERS];

	list_all(inf, all);
	for (size_t i = 0; i < N_INFORMERS; i++) {
		int rc;

		if (all[i] && (rc = tj_reflector_start(all[i])) < 0 && rc != -EALREADY)
			return rc;
	}
	return 0;
}

bool tj_informers_have_synced(const struct tj_informers *inf)
{
	struct tj_reflector *all[N_INFORMERS];

	list_all(inf, all);
	for (size_t i = 0; i < N_INFORMERS; i++)
		if (all[i] && !tj_reflector_has_synced(all[i]))
			return false;
	return true;
}

struct tj_informers *tj_informers_free(struct tj_informers *inf)
{
	struct tj_reflector *all[N_INFORMERS];

	if (!inf)
		return NULL;
	list_all(inf, all);
	for (size_t i = 0; i < N_INFORMERS; i++)
		tj_reflector_free(all[i]);
	free(inf->namespace);
	free(inf);
	return NULL;
}

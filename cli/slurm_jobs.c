#include "cli/slurm_jobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "informers/pod.h"
#include "kube/request.h"
#include "reconcilers/json.h"
#include "reconcilers/usage/accounting.h"
#include "reconcilers/usage/gpu_seconds.h"

static const char *annotation(const cJSON *obj, const char *key)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(ann, key);

	return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

static void job_clear(struct tj_slurm_job *j)
{
	tj_trainjob_free(j->job);
	free(j->user);
	free(j->partition);
	for (size_t i = 0; i < j->n_nodes; i++)
		free(j->nodes[i]);
	free(j->nodes);
	memset(j, 0, sizeof(*j));
}

void tj_slurm_jobs_clear(struct tj_slurm_jobs *jobs)
{
	for (size_t i = 0; i < jobs->n; i++)
		job_clear(&jobs->jobs[i]);
	free(jobs->jobs);
	jobs->jobs = NULL;
	jobs->n = 0;
}

static int job_cmp(const void *a, const void *b)
{
	const struct tj_trainjob *x = ((const struct tj_slurm_job *)a)->job;
	const struct tj_trainjob *y = ((const struct tj_slurm_job *)b)->job;
	int c;

	if (x->creation_time != y->creation_time)
		return x->creation_time < y->creation_time ? -1 : 1;
	c = strcmp(x->namespace, y->namespace);
	return c ? c : strcmp(x->name, y->name);
}

/* The pods of job j among all pods: its nodes, whether some have not ended, and the
 * GPU-seconds not yet in its status. */
static int add_pods(struct tj_slurm_job *j, struct tj_pod *const *pods, size_t n_pods, int64_t now)
{
	const struct tj_pod **mine;
	size_t n = 0;
	bool live = false;
	struct tj_trainjob_status counted;

	mine = calloc(n_pods + 1, sizeof(*mine));
	j->nodes = calloc(n_pods + 1, sizeof(*j->nodes));
	if (!mine || !j->nodes) {
		free(mine);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n_pods; i++) {
		const struct tj_pod *pod = pods[i];

		if (!pod->owner_uid || !j->job->uid || strcmp(pod->owner_uid, j->job->uid) != 0)
			continue;
		mine[n++] = pod;
		if (!tj_pod_terminal(pod))
			live = true;
		if (pod->node_name && !pod->deletion_time) {
			j->nodes[j->n_nodes] = strdup(pod->node_name);
			if (!j->nodes[j->n_nodes]) {
				free(mine);
				return -ENOMEM;
			}
			j->n_nodes++;
		}
	}
	/* The same count the controller makes, as if it wrote a status now (a status that
	 * differs, so that the count is made). */
	counted = j->job->status;
	counted.observed_generation++;
	tj_gpu_seconds_count(&(struct tj_gpu_seconds_input){ .old = &j->job->status,
	                                                     .pods = mine,
	                                                     .n_pods = n,
	                                                     .gang = true,
	                                                     .now = now },
	                     &counted);
	j->gpu_seconds = counted.gpu_seconds;
	j->wasted_gpu_seconds = counted.wasted_gpu_seconds;
	j->state = tj_slurm_state_of(j->job, live);
	free(mine);
	return 0;
}

int tj_slurm_jobs_from_lists(const cJSON *trainjobs, const cJSON *pods_json, int64_t now,
                             struct tj_slurm_jobs *ret)
{
	struct tj_slurm_jobs out = { 0 };
	struct tj_pod **pods = NULL;
	size_t n_pods = 0, n_jobs = (size_t)cJSON_GetArraySize(trainjobs);
	const cJSON *item;
	int r = -ENOMEM;

	pods = calloc((size_t)cJSON_GetArraySize(pods_json) + 1, sizeof(*pods));
	out.jobs = calloc(n_jobs + 1, sizeof(*out.jobs));
	if (!pods || !out.jobs)
		goto fail;
	cJSON_ArrayForEach(item, pods_json) if (tj_pod_from_json(item, &pods[n_pods]) == 0)
	        n_pods++;
	cJSON_ArrayForEach(item, trainjobs)
	{
		struct tj_slurm_job *j = &out.jobs[out.n];
		const char *user = annotation(item, TJ_ANNOTATION_SUBMITTED_BY);

		if (tj_trainjob_from_json(item, &j->job) < 0)
			continue;
		out.n++;
		j->user = strdup(user ? user : j->job->namespace);
		j->partition = strdup(
		        tj_slurm_partition(j->job, annotation(item, TJ_ANNOTATION_PARTITION)));
		if (!j->user || !j->partition || add_pods(j, pods, n_pods, now) < 0)
			goto fail;
	}
	qsort(out.jobs, out.n, sizeof(*out.jobs), job_cmp);
	*ret = out;
	r = 0;
	goto out;
fail:
	tj_slurm_jobs_clear(&out);
out:
	for (size_t i = 0; i < n_pods; i++)
		tj_pod_free(pods[i]);
	free(pods);
	return r;
}

int tj_slurm_list_all(struct tj_plugin *p, const struct tj_ref *ref, const char *selector,
                      const char *field_selector, cJSON **ret)
{
	cJSON *all = cJSON_CreateArray();
	char *token = NULL;
	int r = 0;

	if (!all)
		return -ENOMEM;
	do {
		struct tj_plugin_reply reply;
		struct tj_list_options opts = { .label_selector = selector,
			                        .field_selector = field_selector,
			                        .limit = 500,
			                        .continue_token = token };
		cJSON *items;
		const char *next;

		tj_plugin_reply_init(&reply);
		r = tj_kube_list(p->client, ref, &opts, tj_plugin_reply_fn, &reply, NULL);
		if (r == 0)
			r = tj_plugin_wait(p, &reply);
		if (r < 0) {
			tj_plugin_error(p, "could not list %s: %s", ref->resource->plural,
			                reply.error[0] ? reply.error : strerror(-r));
			tj_plugin_reply_clear(&reply);
			break;
		}
		items = cJSON_GetObjectItemCaseSensitive(reply.body, "items");
		while (cJSON_GetArraySize(items) > 0)
			cJSON_AddItemToArray(all, cJSON_DetachItemFromArray(items, 0));
		free(token);
		next = tj_json_string(reply.body, "metadata.continue");
		token = next && *next ? strdup(next) : NULL;
		tj_plugin_reply_clear(&reply);
		if (cJSON_GetArraySize(all) > TJ_SLURM_MAX_OBJECTS) {
			tj_plugin_error(p, "more than %d %s: narrow it with -n",
			                TJ_SLURM_MAX_OBJECTS, ref->resource->plural);
			r = -E2BIG;
		}
	} while (r == 0 && token);
	free(token);
	if (r < 0) {
		cJSON_Delete(all);
		return r;
	}
	*ret = all;
	return 0;
}

/* The records of a ConfigMap of accounting records, as TrainJob objects added to jobs. */
static void add_records(const cJSON *cm, cJSON *jobs)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(cm, "data"))
	{
		cJSON *obj = cJSON_IsString(v)
		                     ? tj_accounting_object(v->valuestring, strlen(v->valuestring))
		                     : NULL;

		if (obj && cJSON_GetArraySize(jobs) < TJ_SLURM_MAX_OBJECTS)
			cJSON_AddItemToArray(jobs, obj);
		else
			cJSON_Delete(obj);
	}
}

/* The accounting records of the deleted TrainJobs (reconcilers/usage/accounting.h) of the
 * namespace, or of every namespace, added to jobs. Records the user may not read are left
 * out, said on stderr. */
static void fetch_records(struct tj_plugin *p, const char *ns, cJSON *jobs)
{
	if (!ns) {
		struct tj_ref ref = { .resource = &tj_resource_configmaps };
		cJSON *cms = NULL;
		const cJSON *cm;

		if (tj_slurm_list_all(p, &ref, TJ_ACCOUNTING_LABEL "=true", NULL, &cms) < 0) {
			fprintf(stderr, "kubectl %s: the deleted jobs' records are left out\n",
			        p->spec->name);
			return;
		}
		cJSON_ArrayForEach(cm, cms)
		{
			add_records(cm, jobs);
		}
		cJSON_Delete(cms);
		return;
	}
	struct tj_ref ref = { .resource = &tj_resource_configmaps,
		              .namespace = ns,
		              .name = TJ_ACCOUNTING_CONFIGMAP };
	struct tj_plugin_reply reply;
	int r;

	tj_plugin_reply_init(&reply);
	r = tj_kube_get(p->client, &ref, tj_plugin_reply_fn, &reply, NULL);
	if (r == 0)
		r = tj_plugin_wait(p, &reply);
	if (r == 0)
		add_records(reply.body, jobs);
	else if (reply.http_status != 404)
		fprintf(stderr,
		        "kubectl %s: could not read the deleted jobs' records (ConfigMap %s of "
		        "namespace %s): %s; they are left out\n",
		        p->spec->name, TJ_ACCOUNTING_CONFIGMAP, ns,
		        reply.error[0] ? reply.error : strerror(-r));
	tj_plugin_reply_clear(&reply);
}

/* The TrainJobs of ns (NULL: every namespace) and, with_pods, their pods; with records, the
 * deleted jobs' accounting records too. */
static int fetch(struct tj_plugin *p, const char *ns, bool with_pods, bool records, int64_t now,
                 struct tj_slurm_jobs *ret)
{
	struct tj_ref jobs_ref = { .resource = &tj_resource_trainjobs, .namespace = ns };
	struct tj_ref pods_ref = { .resource = &tj_resource_pods, .namespace = ns };
	cJSON *jobs = NULL, *pods = NULL;
	int r;

	r = tj_slurm_list_all(p, &jobs_ref, NULL, NULL, &jobs);
	if (r == 0 && records)
		fetch_records(p, ns, jobs);
	if (r == 0 && with_pods && cJSON_GetArraySize(jobs) > 0)
		r = tj_slurm_list_all(p, &pods_ref, TJ_LABEL_TRAINJOB, NULL, &pods);
	if (r == 0) {
		r = tj_slurm_jobs_from_lists(jobs, pods, now, ret);
		if (r < 0)
			tj_plugin_error(p, "%s", strerror(-r));
	}
	cJSON_Delete(jobs);
	cJSON_Delete(pods);
	return r;
}

int tj_slurm_jobs_fetch(struct tj_plugin *p, bool all_namespaces, int64_t now,
                        struct tj_slurm_jobs *ret)
{
	return fetch(p, all_namespaces ? NULL : p->namespace, true, false, now, ret);
}

int tj_slurm_jobs_fetch_records(struct tj_plugin *p, bool all_namespaces, bool records, int64_t now,
                                struct tj_slurm_jobs *ret)
{
	return fetch(p, all_namespaces ? NULL : p->namespace, true, records, now, ret);
}

int tj_slurm_jobs_fetch_cluster(struct tj_plugin *p, int64_t now, struct tj_slurm_jobs *ret)
{
	return fetch(p, NULL, true, true, now, ret);
}

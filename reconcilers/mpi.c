#include "reconcilers/mpi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base64.h"
#include "base/number.h"
#include "base/quantity.h"
#include "reconcilers/json.h"
#include "reconcilers/steps.h"

#define MAX_POLICY_STRING 4096
/* A P-521 coordinate: 521 bits. */
#define P521_BYTES 66
#define P521_TYPE  "ecdsa-sha2-nistp521"
#define P521_CURVE "nistp521"

/* Kubeflow's file modes of the mounted key pair: the private key 0640, the public key and
 * authorized_keys 0644, anything else 0400. */
#define MODE_DEFAULT     0400
#define MODE_PRIVATE_KEY 0640
#define MODE_PUBLIC_KEY  0644
#define MODE_HOSTFILE    0444

/* OpenMPI's MCA parameters that the launcher gets; a TrainJob may not set them. */
#define ENV_HOSTFILE   "OMPI_MCA_orte_default_hostfile"
#define ENV_KEEP_FQDN  "OMPI_MCA_orte_keep_fqdn_hostnames"
#define ENV_SLOTS      "OMPI_MCA_orte_set_default_slots"
#define ENV_RSH_ARGS   "OMPI_MCA_plm_rsh_args"
#define RSH_ARGS_VALUE "-o ConnectionAttempts=10"

static const char *const reserved_env[] = { ENV_HOSTFILE, ENV_KEEP_FQDN, ENV_SLOTS, ENV_RSH_ARGS };

void tj_mpi_policy_clear(struct tj_mpi_policy *p)
{
	free(p->implementation);
	free(p->ssh_auth_mount_path);
	*p = (struct tj_mpi_policy){ 0 };
}

static int dup_bounded(const cJSON *v, const char *dflt, char **ret)
{
	const char *s = cJSON_IsString(v) ? v->valuestring : dflt;

	if (strlen(s) > MAX_POLICY_STRING)
		return -E2BIG;
	*ret = strdup(s);
	return *ret ? 0 : -ENOMEM;
}

int tj_mpi_policy_from_json(const cJSON *mpi, struct tj_mpi_policy *ret)
{
	struct tj_mpi_policy p = { 0 };
	const cJSON *procs;
	int64_t n;
	int r;

	if (!cJSON_IsObject(mpi)) {
		*ret = p;
		return 0;
	}
	p.enabled = true;
	p.num_proc_per_node = 1;
	procs = cJSON_GetObjectItemCaseSensitive(mpi, "numProcPerNode");
	if (cJSON_IsNumber(procs) && tj_double_to_int64(procs->valuedouble, 1, INT32_MAX, &n))
		p.num_proc_per_node = (int)n;
	p.run_launcher_as_node =
	        cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(mpi, "runLauncherAsNode"));
	r = dup_bounded(cJSON_GetObjectItemCaseSensitive(mpi, "mpiImplementation"), TJ_MPI_OPENMPI,
	                &p.implementation);
	if (r == 0)
		r = dup_bounded(cJSON_GetObjectItemCaseSensitive(mpi, "sshAuthMountPath"),
		                TJ_MPI_DEFAULT_MOUNT_PATH, &p.ssh_auth_mount_path);
	if (r < 0) {
		tj_mpi_policy_clear(&p);
		return r;
	}
	*ret = p;
	return 0;
}

/* The TrainJob's numProcPerNode as an integer >= 1: 0 when unset, -1 when it is not one. */
static int job_procs(const struct tj_trainjob *job)
{
	const char *s = job->num_proc_per_node;
	char *end;
	long v;

	if (!s)
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > INT32_MAX)
		return -1;
	return (int)v;
}

int tj_mpi_validate(const struct tj_mpi_policy *p, const char *runtime, bool has_launcher,
                    bool has_node, const struct tj_trainjob *job, struct tj_problem *why)
{
	if (!p->enabled)
		return 0;
	if (strcmp(p->implementation, TJ_MPI_OPENMPI) != 0) {
		tj_problem_set(why, "UnsupportedRuntime",
		               "%s: spec.mlPolicy.mpi.mpiImplementation '%s' is not supported; "
		               "this controller runs OpenMPI only, as Kubeflow Trainer does",
		               runtime, p->implementation);
		return -EOPNOTSUPP;
	}
	for (size_t i = 0; i < job->n_env; i++)
		for (size_t k = 0; k < sizeof(reserved_env) / sizeof(reserved_env[0]); k++)
			if (strcmp(job->env[i].name, reserved_env[k]) == 0)
				return tj_problem_set(
				        why, "InvalidSpec",
				        "spec.trainer.env[%zu].name: %s is set by the "
				        "controller for MPI and must not be set",
				        i, reserved_env[k]);
	if (job_procs(job) < 0)
		return tj_problem_set(why, "InvalidSpec",
		                      "spec.trainer.numProcPerNode: '%s' must be an integer >= 1 "
		                      "with %s, an MPI runtime",
		                      job->num_proc_per_node, runtime);
	if (p->run_launcher_as_node && job->num_nodes >= 2 && (!has_launcher || !has_node))
		return tj_problem_set(
		        why, "InvalidSpec",
		        "spec.trainer.numNodes: must be 1, as %s runs the launcher as a "
		        "node (runLauncherAsNode) but lacks a %s replicatedJob",
		        runtime, has_launcher ? "node" : "launcher");
	return 0;
}

int tj_mpi_slots(const struct tj_mpi_policy *p, const struct tj_trainjob *job, long gpus_per_node)
{
	int procs = job_procs(job);

	if (procs > 0)
		return procs;
	if (p->num_proc_per_node == 1 && gpus_per_node > 1)
		return gpus_per_node > INT32_MAX ? INT32_MAX : (int)gpus_per_node;
	return p->num_proc_per_node;
}

bool tj_mpi_runs_trainer(const struct tj_mpi_policy *p, const cJSON *pod)
{
	const char *ancestor = cJSON_GetStringValue(
	        cJSON_GetObjectItemCaseSensitive(tj_json_path(pod, "metadata.labels"),
	                                         "trainer.kubeflow.org/trainjob-ancestor-step"));

	return !p->enabled || (ancestor && strcmp(ancestor, "trainer") == 0);
}

/* The first resource of list whose name has "gpu" in it, in whole units; 0 if none. */
static long gpus_in(const cJSON *list)
{
	const cJSON *el;
	int64_t v;

	cJSON_ArrayForEach(el, list)
	{
		if (strcasestr(el->string, "gpu"))
			return tj_quantity_json_value(el, &v) == 0 && v > 0 && v <= INT32_MAX
			               ? (long)v
			               : 0;
	}
	return 0;
}

long tj_mpi_pod_gpus(const cJSON *pod)
{
	const cJSON *c = tj_json_find_by(tj_json_path(pod, "spec.containers"), "name", "node");
	long gpus = gpus_in(tj_json_path(c, "resources.requests"));

	return gpus > 0 ? gpus : gpus_in(tj_json_path(c, "resources.limits"));
}

int tj_mpi_node_pods(const struct tj_mpi_policy *p, int num_nodes)
{
	if (p->enabled && p->run_launcher_as_node)
		return num_nodes - 1 > 1 ? num_nodes - 1 : 1;
	return num_nodes;
}

static bool counts_as_node(const struct tj_mpi_policy *p, const char *step)
{
	return strcmp(step, "node") == 0 ||
	       (p->run_launcher_as_node && strcmp(step, "launcher") == 0);
}

int tj_mpi_hostfile(const struct tj_mpi_policy *p, const char *job, const char *subdomain,
                    const struct tj_mpi_step *steps, size_t n_steps, int slots, char **ret)
{
	size_t lines = 0, size = 1, used = 0;
	char *text;

	for (size_t s = 0; s < n_steps; s++) {
		if (!counts_as_node(p, steps[s].name))
			continue;
		if (steps[s].replicas < 0 || steps[s].pods < 0 ||
		    (steps[s].replicas > 0 && steps[s].pods > TJ_MAX_NODES / steps[s].replicas))
			return -E2BIG;
		lines += (size_t)steps[s].replicas * (size_t)steps[s].pods;
		if (lines > TJ_MAX_NODES)
			return -E2BIG;
		/* "<job>-<step>-<r>-<i>.<subdomain> slots=<n>\n", numbers of at most 10 digits */
		size += (size_t)steps[s].replicas * (size_t)steps[s].pods *
		        (strlen(job) + strlen(steps[s].name) + strlen(subdomain) + 3 * 10 + 12);
	}
	text = malloc(size);
	if (!text)
		return -ENOMEM;
	text[0] = '\0';
	for (size_t s = 0; s < n_steps; s++) {
		if (!counts_as_node(p, steps[s].name))
			continue;
		for (int r = 0; r < steps[s].replicas; r++)
			for (int i = 0; i < steps[s].pods; i++)
				used += (size_t)snprintf(text + used, size - used,
				                         "%s-%s-%d-%d.%s slots=%d\n", job,
				                         steps[s].name, r, i, subdomain, slots);
	}
	*ret = text;
	return 0;
}

static cJSON *key_to_path(const char *key, const char *path, int mode)
{
	cJSON *item = cJSON_CreateObject();

	if (!item || tj_json_set_string(item, "key", key) < 0 ||
	    tj_json_set_string(item, "path", path) < 0 ||
	    tj_json_set(item, "mode", cJSON_CreateNumber(mode)) < 0)
		return cJSON_Delete(item), NULL;
	return item;
}

/* Replaces the element of list whose member key equals value with item, or appends it. */
static int upsert(cJSON *parent, const char *list_key, const char *key, cJSON *item)
{
	cJSON *list = tj_json_array(parent, list_key), *old;

	if (!list || !item) {
		cJSON_Delete(item);
		return -ENOMEM;
	}
	old = tj_json_find_by(list, key, tj_json_string(item, key));
	if (old) {
		if (!cJSON_ReplaceItemViaPointer(list, old, item)) {
			cJSON_Delete(item);
			return -ENOMEM;
		}
		return 0;
	}
	return tj_json_append(list, item);
}

static cJSON *ssh_auth_volume(const char *job)
{
	char name[TJ_NAME_MAX + sizeof(TJ_MPI_SSH_AUTH_SUFFIX)];
	cJSON *vol = cJSON_CreateObject(), *src, *items;

	snprintf(name, sizeof(name), "%s%s", job, TJ_MPI_SSH_AUTH_SUFFIX);
	if (!vol || tj_json_set_string(vol, "name", TJ_MPI_SSH_AUTH_VOLUME) < 0)
		goto fail;
	src = tj_json_object(vol, "secret");
	items = tj_json_array(src, "items");
	if (!items || tj_json_set_string(src, "secretName", name) < 0 ||
	    tj_json_set(src, "defaultMode", cJSON_CreateNumber(MODE_DEFAULT)) < 0 ||
	    tj_json_append(items, key_to_path(TJ_MPI_PRIVATE_KEY, "id_rsa", MODE_PRIVATE_KEY)) <
	            0 ||
	    tj_json_append(items, key_to_path(TJ_MPI_PUBLIC_KEY, "id_rsa.pub", MODE_PUBLIC_KEY)) <
	            0 ||
	    tj_json_append(items,
	                   key_to_path(TJ_MPI_PUBLIC_KEY, "authorized_keys", MODE_PUBLIC_KEY)) < 0)
		goto fail;
	return vol;
fail:
	cJSON_Delete(vol);
	return NULL;
}

static cJSON *hostfile_volume(const char *job)
{
	char name[TJ_NAME_MAX + sizeof(TJ_MPI_HOSTFILE_SUFFIX)];
	cJSON *vol = cJSON_CreateObject(), *src, *items;

	snprintf(name, sizeof(name), "%s%s", job, TJ_MPI_HOSTFILE_SUFFIX);
	if (!vol || tj_json_set_string(vol, "name", TJ_MPI_HOSTFILE_VOLUME) < 0)
		goto fail;
	src = tj_json_object(vol, "configMap");
	items = tj_json_array(src, "items");
	if (!items || tj_json_set_string(src, "name", name) < 0 ||
	    tj_json_append(items, key_to_path(TJ_MPI_HOSTFILE_KEY, TJ_MPI_HOSTFILE_KEY,
	                                      MODE_HOSTFILE)) < 0)
		goto fail;
	return vol;
fail:
	cJSON_Delete(vol);
	return NULL;
}

static cJSON *pair(const char *k1, const char *v1, const char *k2, const char *v2)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || tj_json_set_string(o, k1, v1) < 0 || tj_json_set_string(o, k2, v2) < 0)
		return cJSON_Delete(o), NULL;
	return o;
}

static int launcher_env(cJSON *c, int slots)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", slots);
	if (upsert(c, "env", "name",
	           pair("name", ENV_HOSTFILE, "value",
	                TJ_MPI_HOSTFILE_DIR "/" TJ_MPI_HOSTFILE_KEY)) < 0 ||
	    upsert(c, "env", "name", pair("name", ENV_KEEP_FQDN, "value", "true")) < 0 ||
	    upsert(c, "env", "name", pair("name", ENV_SLOTS, "value", n)) < 0 ||
	    upsert(c, "env", "name", pair("name", ENV_RSH_ARGS, "value", RSH_ARGS_VALUE)) < 0)
		return -ENOMEM;
	return 0;
}

int tj_mpi_apply_pod(cJSON *pod, const char *step, const struct tj_mpi_policy *p, const char *job,
                     int slots)
{
	bool launcher = strcmp(step, "launcher") == 0;
	cJSON *spec, *c;

	if (!p->enabled || (!launcher && strcmp(step, "node") != 0))
		return 0;
	spec = tj_json_object(pod, "spec");
	if (!spec || upsert(spec, "volumes", "name", ssh_auth_volume(job)) < 0 ||
	    (launcher && upsert(spec, "volumes", "name", hostfile_volume(job)) < 0))
		return -ENOMEM;
	c = tj_json_find_by(cJSON_GetObjectItemCaseSensitive(spec, "containers"), "name", "node");
	if (!c)
		return 0;
	if (upsert(c, "volumeMounts", "mountPath",
	           pair("name", TJ_MPI_SSH_AUTH_VOLUME, "mountPath", p->ssh_auth_mount_path)) < 0)
		return -ENOMEM;
	if (!launcher)
		return 0;
	if (upsert(c, "volumeMounts", "mountPath",
	           pair("name", TJ_MPI_HOSTFILE_VOLUME, "mountPath", TJ_MPI_HOSTFILE_DIR)) < 0 ||
	    launcher_env(c, slots) < 0)
		return -ENOMEM;
	return 0;
}

/* A new object apiVersion v1 of kind, named <job><suffix> in the job's namespace, labelled
 * with the job's name and owned by it. */
static cJSON *owned_object(const struct tj_trainjob *job, const char *kind, const char *suffix)
{
	char name[TJ_NAME_MAX + 32];
	cJSON *obj = cJSON_CreateObject(), *meta;

	snprintf(name, sizeof(name), "%s%s", job->name, suffix);
	if (!obj || tj_json_set_string(obj, "apiVersion", "v1") < 0 ||
	    tj_json_set_string(obj, "kind", kind) < 0)
		goto fail;
	meta = tj_json_object(obj, "metadata");
	if (!meta || tj_json_set_string(meta, "name", name) < 0 ||
	    tj_json_set_string(meta, "namespace", job->namespace) < 0 ||
	    tj_json_set_string(tj_json_object(meta, "labels"), TJ_LABEL_TRAINJOB, job->name) < 0 ||
	    tj_trainjob_add_owner(meta, job) < 0)
		goto fail;
	return obj;
fail:
	cJSON_Delete(obj);
	return NULL;
}

static int set_base64(cJSON *map, const char *key, const char *text)
{
	char *b64;
	int r = tj_base64_encode((const uint8_t *)text, strlen(text), &b64);

	if (r < 0)
		return r;
	r = tj_json_set_string(map, key, b64);
	free(b64);
	return r;
}

int tj_mpi_secret(const struct tj_trainjob *job, cJSON **ret)
{
	cJSON *s = owned_object(job, "Secret", TJ_MPI_SSH_AUTH_SUFFIX);

	if (!s || tj_json_set_string(s, "type", "kubernetes.io/ssh-auth") < 0 ||
	    tj_json_set(s, "immutable", cJSON_CreateTrue()) < 0) {
		cJSON_Delete(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

int tj_mpi_secret_set_key(cJSON *secret, const char *private_pem, const char *authorized_key)
{
	cJSON *data = cJSON_CreateObject();
	int r = -ENOMEM;

	if (!data)
		return -ENOMEM;
	r = set_base64(data, TJ_MPI_PRIVATE_KEY, private_pem);
	if (r == 0)
		r = set_base64(data, TJ_MPI_PUBLIC_KEY, authorized_key);
	if (r == 0)
		return tj_json_set(secret, "data", data);
	cJSON_Delete(data);
	return r;
}

int tj_mpi_config_map(const struct tj_trainjob *job, const char *hostfile, cJSON **ret)
{
	cJSON *cm = owned_object(job, "ConfigMap", TJ_MPI_HOSTFILE_SUFFIX);

	if (!cm ||
	    tj_json_set_string(tj_json_object(cm, "data"), TJ_MPI_HOSTFILE_KEY, hostfile) < 0) {
		cJSON_Delete(cm);
		return -ENOMEM;
	}
	*ret = cm;
	return 0;
}

/* Appends an SSH wire-format string (RFC 4251 section 5): a 32-bit big-endian length, then
 * the bytes. */
static size_t put_string(uint8_t *out, const void *data, size_t n)
{
	out[0] = (uint8_t)(n >> 24);
	out[1] = (uint8_t)(n >> 16);
	out[2] = (uint8_t)(n >> 8);
	out[3] = (uint8_t)n;
	memcpy(out + 4, data, n);
	return 4 + n;
}

/* Writes a coordinate as exactly P521_BYTES big-endian bytes; false if it is longer. */
static bool put_coordinate(uint8_t out[static P521_BYTES], const uint8_t *v, size_t n)
{
	while (n > 0 && v[0] == 0)
		v++, n--;
	if (n > P521_BYTES)
		return false;
	memset(out, 0, P521_BYTES - n);
	if (n)
		memcpy(out + P521_BYTES - n, v, n);
	return true;
}

int tj_mpi_authorized_key(const uint8_t *x, size_t x_len, const uint8_t *y, size_t y_len,
                          char **ret)
{
	/* RFC 5656 section 3.1: string type, string curve, string Q (uncompressed point). */
	uint8_t point[1 + 2 * P521_BYTES];
	uint8_t blob[4 + sizeof(P521_TYPE) - 1 + 4 + sizeof(P521_CURVE) - 1 + 4 + sizeof(point)];
	size_t n = 0;
	char *b64, *line;
	int r;

	point[0] = 0x04;
	if (!put_coordinate(point + 1, x, x_len) ||
	    !put_coordinate(point + 1 + P521_BYTES, y, y_len))
		return -EINVAL;
	n += put_string(blob + n, P521_TYPE, sizeof(P521_TYPE) - 1);
	n += put_string(blob + n, P521_CURVE, sizeof(P521_CURVE) - 1);
	n += put_string(blob + n, point, sizeof(point));
	r = tj_base64_encode(blob, n, &b64);
	if (r < 0)
		return r;
	r = asprintf(&line, "%s %s\n", P521_TYPE, b64);
	free(b64);
	if (r < 0)
		return -ENOMEM;
	*ret = line;
	return 0;
}

/* Memory per cached pod, at the unit level: projects N full Pod objects (as the API server
 * returns them, managedFields included; built from tests/unit/data/pod-running.json) into the
 * pod store, the way the reflector does, and reports the heap growth per pod from
 * mallinfo2(), with the time per pod for parse + projection + store.
 *
 *   build/tests/bench/bench_pod_cache [N] [fixture.json]
 *
 * Shape: pods in 10 namespaces, TrainJobs of 8 pods, 4,000 nodes; every pod has its own
 * name, uid and resourceVersion. */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "informers/intern.h"
#include "informers/pod.h"
#include "informers/store.h"

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len + 1);
	if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[len] = '\0';
	fclose(f);
	return buf;
}

static void set_string(cJSON *obj, const char *key, const char *value)
{
	cJSON_ReplaceItemInObjectCaseSensitive(obj, key, cJSON_CreateString(value));
}

/* The JSON text of pod i, as a list item or a watch event's object would carry it. */
static char *make_pod(cJSON *tmpl, long i)
{
	cJSON *meta = cJSON_GetObjectItem(tmpl, "metadata");
	cJSON *labels = cJSON_GetObjectItem(meta, "labels");
	cJSON *spec = cJSON_GetObjectItem(tmpl, "spec");
	long job = i / 8, rank = i % 8;
	char ns[32], name[96], uid[64], rv[24], jobname[48], node[32], r[24], owner[64];

	snprintf(ns, sizeof(ns), "team-%02ld", job % 10);
	snprintf(jobname, sizeof(jobname), "finetune-llama-%06ld", job);
	snprintf(name, sizeof(name), "%s-node-0-%ld-a0", jobname, rank);
	snprintf(uid, sizeof(uid), "%08lx-9b7d-4e15-8a3c-%012lx", i, i * 7919);
	snprintf(owner, sizeof(owner), "%08lx-5e4f-4321-8765-0fedcba98765", job);
	snprintf(rv, sizeof(rv), "%ld", 1000000 + i);
	snprintf(node, sizeof(node), "gh200-%04ld", (i * 13) % 4000);
	snprintf(r, sizeof(r), "%ld", rank);
	set_string(meta, "namespace", ns);
	set_string(meta, "name", name);
	set_string(meta, "uid", uid);
	set_string(meta, "resourceVersion", rv);
	set_string(cJSON_GetArrayItem(cJSON_GetObjectItem(meta, "ownerReferences"), 0), "uid",
	           owner);
	set_string(labels, TJ_LABEL_TRAINJOB, jobname);
	set_string(labels, "jobset.sigs.k8s.io/jobset-name", jobname);
	set_string(labels, TJ_LABEL_RANK, r);
	set_string(spec, "nodeName", node);
	set_string(spec, "hostname", name);
	set_string(spec, "subdomain", jobname);
	return cJSON_PrintUnformatted(tmpl);
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
	const char *path = argc > 2 ? argv[2] : TJ_TEST_DATA "/pod-running.json";
	char *text = read_file(path);
	cJSON *tmpl = text ? cJSON_Parse(text) : NULL;
	struct tj_store *store;
	char **docs;
	size_t json_bytes = 0, before, after;
	double t0, elapsed;

	if (!tmpl || n <= 0) {
		fprintf(stderr, "usage: %s [N] [pod.json] (cannot read %s)\n", argv[0], path);
		return 2;
	}
	free(text);
	docs = calloc((size_t)n, sizeof(*docs));
	if (!docs)
		return 1;
	for (long i = 0; i < n; i++) {
		docs[i] = make_pod(tmpl, i);
		json_bytes += strlen(docs[i]);
	}
	cJSON_Delete(tmpl);
	if (tj_store_new(&tj_pod_store_ops, &store) < 0)
		return 1;

	malloc_trim(0);
	before = mallinfo2().uordblks;
	t0 = seconds();
	for (long i = 0; i < n; i++) {
		cJSON *obj = cJSON_Parse(docs[i]);
		void *pod;

		if (!obj || tj_pod_project(obj, &pod) < 0 ||
		    tj_store_upsert(store, pod, NULL) < 0) {
			fprintf(stderr, "pod %ld failed\n", i);
			return 1;
		}
		cJSON_Delete(obj);
	}
	elapsed = seconds() - t0;
	after = mallinfo2().uordblks;

	printf("pods                 %ld\n", n);
	printf("JSON per pod         %zu bytes\n", json_bytes / (size_t)n);
	printf("cache per pod        %.0f bytes (heap in use, mallinfo2)\n",
	       (double)(after - before) / (double)n);
	printf("  struct tj_pod      %zu bytes + its strings\n", sizeof(struct tj_pod));
	printf("  interned strings   %zu distinct\n", tj_intern_count());
	printf("parse+project+store %.2f us per pod\n", elapsed * 1e6 / (double)n);
	printf("pods of one job      %zu (index by TrainJob)\n",
	       tj_store_index_count(store, TJ_POD_INDEX_TRAINJOB, "team-00/finetune-llama-000000"));

	tj_store_free(store);
	for (long i = 0; i < n; i++)
		cJSON_free(docs[i]);
	free(docs);
	return 0;
}

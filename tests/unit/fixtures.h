/* Fixtures shared by the reconciler's unit tests: JSON literals written with single quotes
 * (so that they read like the YAML they stand for), an exact JSON comparison that prints
 * both sides on a mismatch, the GPU classes of the shipped config, and pods and runtimes
 * built by hand. Included after <cmocka.h>. */
#pragma once

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "informers/pod.h"
#include "reconcilers/runtime.h"
#include "reconcilers/settings.h"
#include "reconcilers/trainjob.h"

/* Parses JSON written with ' for " (no literal ' inside strings). */
static inline cJSON *jlit(const char *sq)
{
	char *s = strdup(sq);
	cJSON *j;

	assert_non_null(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = cJSON_Parse(s);
	if (!j)
		fail_msg("fixture does not parse: %s", s);
	free(s);
	return j;
}

static inline void assert_json_equal(const cJSON *actual, const char *expected_sq)
{
	cJSON *want = jlit(expected_sq);

	if (!cJSON_Compare(actual, want, true)) {
		char *a = cJSON_PrintUnformatted(actual), *w = cJSON_PrintUnformatted(want);

		print_message("# actual:   %s\n# expected: %s\n", a, w);
		free(a);
		free(w);
		cJSON_Delete(want);
		fail_msg("JSON differs");
	}
	cJSON_Delete(want);
}

/* The classes of deploy/config: gh200 (arm64) and h100 (amd64). */
static struct tj_kv gh200_labels[] = { { "nvidia.com/gpu.product", "NVIDIA-GH200-480GB" } };
static struct tj_kv h100_labels[] = { { "nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3" } };
static struct tj_toleration gpu_tolerations[] = {
	{ "nvidia.com/gpu", "Exists", NULL, "NoSchedule" },
};
static struct tj_gpu_class test_classes[] = {
	{ "gh200", "nvidia.com/gpu", "arm64", gh200_labels, 1, gpu_tolerations, 1 },
	{ "h100", "nvidia.com/gpu", "amd64", h100_labels, 1, gpu_tolerations, 1 },
};
static const struct tj_config test_config
        __attribute__((unused)) = { .classes = test_classes, .n_classes = 2 };

/* A runtime in Kubeflow's format: torch, one `node` job, a container with an env the
 * controller overrides (PET_NNODES), a sidecar and a volume. %s is the runtime's name. */
#define RUNTIME_FMT                                                                                \
	"{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'ClusterTrainingRuntime',"           \
	"'metadata':{'name':'%s','labels':{'trainer.kubeflow.org/framework':'torch'}},"            \
	"'spec':{'mlPolicy':{'numNodes':1,'torch':{'numProcPerNode':'auto'}},"                     \
	"'template':{'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{'labels':"   \
	"{'trainer.kubeflow.org/trainjob-ancestor-step':'trainer'}},'spec':{'template':{"          \
	"'metadata':{'labels':{'team':'ml'}},'spec':{'containers':["                               \
	"{'name':'node','image':'pytorch/pytorch:2.7.1','command':['torchrun'],"                   \
	"'args':['train.py'],'env':[{'name':'NCCL_DEBUG','value':'WARN'},"                         \
	"{'name':'PET_NNODES','value':'99'}]},"                                                    \
	"{'name':'sidecar','image':'busybox'}],"                                                   \
	"'volumes':[{'name':'shm','emptyDir':{'medium':'Memory'}}]}}}}}]}}}}"

static inline struct tj_runtime *make_runtime(const char *name)
{
	char buf[4096];
	struct tj_runtime *rt = NULL;
	cJSON *j;

	snprintf(buf, sizeof(buf), RUNTIME_FMT, name);
	j = jlit(buf);
	assert_int_equal(tj_runtime_from_json(j, &rt), 0);
	cJSON_Delete(j);
	return rt;
}

/* A TrainJob "vit" in namespace team-a; spec_sq is the JSON of its spec. */
static inline struct tj_trainjob *make_job(const char *spec_sq)
{
	char buf[8192];
	struct tj_trainjob *job = NULL;
	cJSON *j;

	snprintf(buf, sizeof(buf),
	         "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"
	         "'metadata':{'name':'vit','namespace':'team-a','uid':'uid-vit',"
	         "'resourceVersion':'42','generation':2,"
	         "'creationTimestamp':'2026-11-29T10:00:00Z'},'spec':%s}",
	         spec_sq);
	j = jlit(buf);
	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	cJSON_Delete(j);
	return job;
}

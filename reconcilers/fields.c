#include "reconcilers/fields.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define T TJ_FIELD_TRAINJOB
#define R TJ_FIELD_RUNTIME

#define SUPPORTED(kind, path)                                                                      \
	{                                                                                          \
		kind, path, TJ_FIELD_SUPPORTED, false, NULL                                        \
	}
#define SUPPORTED_SUBTREE(kind, path)                                                              \
	{                                                                                          \
		kind, path, TJ_FIELD_SUPPORTED, true, NULL                                         \
	}
#define LIMITED(kind, path)                                                                        \
	{                                                                                          \
		kind, path, TJ_FIELD_LIMITED, false, NULL                                          \
	}
#define LIMITED_SUBTREE(kind, path)                                                                \
	{                                                                                          \
		kind, path, TJ_FIELD_LIMITED, true, NULL                                           \
	}
#define ACCEPTED(kind, path)                                                                       \
	{                                                                                          \
		kind, path, TJ_FIELD_ACCEPTED, false, NULL                                         \
	}
#define REFUSED(kind, path, why)                                                                   \
	{                                                                                          \
		kind, path, TJ_FIELD_REFUSED, false, why                                           \
	}
#define REFUSED_SUBTREE(kind, path, why)                                                           \
	{                                                                                          \
		kind, path, TJ_FIELD_REFUSED, true, why                                            \
	}

#define JOB "template.spec.replicatedJobs[].template.spec"
#define NO_JOB                                                                                     \
	"a step's pods are created without a Job, and this Job field's behaviour is not "          \
	"reproduced"

/* The order is crds/README.md's. */
static const struct tj_field table[] = {
	/* TrainJob */
	SUPPORTED_SUBTREE(T, "runtimeRef"),
	SUPPORTED(T, "trainer.image"),
	SUPPORTED_SUBTREE(T, "trainer.command"),
	SUPPORTED_SUBTREE(T, "trainer.args"),
	SUPPORTED_SUBTREE(T, "trainer.env"),
	SUPPORTED(T, "trainer.numNodes"),
	SUPPORTED(T, "trainer.numProcPerNode"),
	SUPPORTED_SUBTREE(T, "trainer.resourcesPerNode"),
	SUPPORTED(T, "labels"),
	SUPPORTED(T, "annotations"),
	SUPPORTED_SUBTREE(T, "podTemplateOverrides[].metadata"),
	SUPPORTED_SUBTREE(T, "podTemplateOverrides[].targetJobs"),
	SUPPORTED_SUBTREE(T, "podSpecOverrides[].targetJobs"),
	LIMITED_SUBTREE(T, "podTemplateOverrides[].spec"),
	LIMITED(T, "podSpecOverrides[].*"),
	LIMITED_SUBTREE(T, "runtimePatches[].trainingRuntimeSpec"),
	ACCEPTED(T, "runtimePatches[].manager"),
	ACCEPTED(T, "runtimePatches[].time"),
	SUPPORTED(T, "suspend"),
	SUPPORTED(T, "managedBy"),
	SUPPORTED(T, "activeDeadlineSeconds"),
	LIMITED_SUBTREE(T, "initializer.dataset"),
	LIMITED_SUBTREE(T, "initializer.model"),

	/* Runtime */
	SUPPORTED(R, "mlPolicy.numNodes"),
	SUPPORTED(R, "mlPolicy.torch.numProcPerNode"),
	LIMITED_SUBTREE(R, "mlPolicy.torch.envInjection.targets"),
	REFUSED(R, "mlPolicy.torch.envInjection.*", "of envInjection only targets is implemented"),
	REFUSED(R, "mlPolicy.torch.*",
	        "of the torch policy only numProcPerNode and envInjection are implemented "
	        "(torchrun's static rendezvous, no elastic range of nodes)"),
	SUPPORTED(R, "mlPolicy.mpi.numProcPerNode"),
	LIMITED(R, "mlPolicy.mpi.mpiImplementation"),
	SUPPORTED(R, "mlPolicy.mpi.sshAuthMountPath"),
	SUPPORTED(R, "mlPolicy.mpi.runLauncherAsNode"),
	REFUSED(R, "mlPolicy.mpi.*",
	        "of the MPI policy only numProcPerNode, mpiImplementation, "
	        "sshAuthMountPath and runLauncherAsNode are implemented"),
	SUPPORTED(R, "mlPolicy.jax"),
	SUPPORTED(R, "mlPolicy.xgboost"),
	REFUSED(R, "mlPolicy.jax.*",
	        "Kubeflow's policy has no fields; its wiring is derived from the nodes and their "
	        "GPUs"),
	REFUSED(R, "mlPolicy.xgboost.*",
	        "Kubeflow's policy has no fields; its wiring is derived from the nodes and their "
	        "GPUs"),
	REFUSED_SUBTREE(R, "mlPolicy.flux", "Flux's broker is not built"),
	REFUSED(R, "mlPolicy.*",
	        "only the torch, mpi, jax and xgboost policies are implemented; their "
	        "environment wiring is what this controller reproduces"),
	REFUSED_SUBTREE(R, "podGroupPolicy",
	                "the controller's own admission creates a job's pods only when all of "
	                "them fit, without another scheduler's PodGroups"),
	SUPPORTED(R, "ttlSecondsAfterFinished"),
	SUPPORTED(R, "activeDeadlineSeconds"),
	SUPPORTED(R, "template.metadata.labels"),
	SUPPORTED(R, "template.metadata.annotations"),
	SUPPORTED(R, "template.spec.replicatedJobs[].name"),
	SUPPORTED(R, "template.spec.replicatedJobs[].replicas"),
	SUPPORTED(R, "template.spec.replicatedJobs[].groupName"),
	SUPPORTED_SUBTREE(R, "template.spec.replicatedJobs[].dependsOn"),
	SUPPORTED(R, "template.spec.replicatedJobs[].template.metadata.labels"),
	SUPPORTED(R, "template.spec.replicatedJobs[].template.metadata.annotations"),
	REFUSED(R, "template.spec.replicatedJobs[].*", "the field is not implemented"),
	SUPPORTED(R, JOB ".parallelism"),
	SUPPORTED(R, JOB ".completions"),
	SUPPORTED_SUBTREE(R, JOB ".template"),
	LIMITED(R, JOB ".activeDeadlineSeconds"),
	LIMITED(R, JOB ".backoffLimit"),
	LIMITED(R, JOB ".completionMode"),
	LIMITED(R, JOB ".podReplacementPolicy"),
	REFUSED(R, JOB ".backoffLimitPerIndex",
	        "a step's failed pod is not retried by itself: it fails the step, and the "
	        "JobSet failurePolicy decides"),
	REFUSED(R, JOB ".maxFailedIndexes",
	        "a step's failed pod is not retried by itself: it fails the step, and the "
	        "JobSet failurePolicy decides"),
	LIMITED_SUBTREE(R, JOB ".podFailurePolicy.rules"),
	REFUSED(R, JOB ".podFailurePolicy.*", "of podFailurePolicy only rules is implemented"),
	REFUSED_SUBTREE(R, JOB ".successPolicy",
	                "a step succeeds when every pod of it succeeded; the JobSet "
	                "successPolicy decides which steps end the job"),
	REFUSED(R, JOB ".ttlSecondsAfterFinished",
	        "the pods of every step are kept until the runtime's ttlSecondsAfterFinished"),
	REFUSED(R, JOB ".*", NO_JOB),
	SUPPORTED_SUBTREE(R, "template.spec.successPolicy"),
	SUPPORTED_SUBTREE(R, "template.spec.startupPolicy"),
	SUPPORTED_SUBTREE(R, "template.spec.volumeClaimPolicies[].templates"),
	LIMITED(R, "template.spec.volumeClaimPolicies[].retentionPolicy.whenDeleted"),
	REFUSED(R, "template.spec.volumeClaimPolicies[].retentionPolicy.*",
	        "of the retention policy only whenDeleted is implemented, as in JobSet v0.11"),
	REFUSED(R, "template.spec.volumeClaimPolicies[].*", "the field is not implemented"),
	LIMITED(R, "template.spec.failurePolicy.maxRestarts"),
	LIMITED_SUBTREE(R, "template.spec.failurePolicy.rules"),
	LIMITED(R, "template.spec.failurePolicy.restartStrategy"),
	REFUSED(R, "template.spec.failurePolicy.*", "the field is not implemented"),
	LIMITED(R, "template.spec.network.enableDNSHostnames"),
	LIMITED(R, "template.spec.network.publishNotReadyAddresses"),
	REFUSED(R, "template.spec.network.subdomain",
	        "the pods' subdomain is the TrainJob's name, as their DNS names "
	        "(PET_MASTER_ADDR) say"),
	REFUSED(R, "template.spec.network.*", "the field is not implemented"),
	ACCEPTED(R, "template.spec.suspend"),
	SUPPORTED(R, "template.spec.ttlSecondsAfterFinished"),
	REFUSED_SUBTREE(R, "template.spec.coordinator", "the field is not implemented"),
	REFUSED(R, "template.spec.managedBy", "the field is not implemented"),
	REFUSED(R, "template.spec.*", "the field is not implemented"),
};

const struct tj_field *tj_fields(size_t *ret_n)
{
	*ret_n = sizeof(table) / sizeof(table[0]);
	return table;
}

const char *tj_field_fate_name(enum tj_field_fate fate)
{
	switch (fate) {
	case TJ_FIELD_SUPPORTED:
		return "supported";
	case TJ_FIELD_LIMITED:
		return "limited";
	case TJ_FIELD_ACCEPTED:
		return "accepted";
	case TJ_FIELD_REFUSED:
		return "refused";
	}
	return "?";
}

static const struct tj_field *exact(enum tj_field_kind kind, const char *path, size_t len)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].kind == kind && strlen(table[i].path) == len &&
		    strncmp(table[i].path, path, len) == 0)
			return &table[i];
	return NULL;
}

/* The length of the path of the object path is a member or the items of: "a.b[]" and
 * "a.b.c" give the length of "a.b"; 0 at the top. */
static size_t parent_len(const char *path, size_t len)
{
	if (len >= 2 && path[len - 1] == ']' && path[len - 2] == '[')
		return len - 2;
	while (len > 0 && path[len - 1] != '.')
		len--;
	return len > 0 ? len - 1 : 0;
}

const struct tj_field *tj_field_find(enum tj_field_kind kind, const char *path)
{
	size_t len = strlen(path), p = parent_len(path, len);
	const struct tj_field *f = exact(kind, path, len);
	char wildcard[256];

	if (f)
		return f;
	if (len < 2 || path[len - 1] != ']') {
		snprintf(wildcard, sizeof(wildcard), "%.*s%s*", (int)p, path, p ? "." : "");
		if ((f = exact(kind, wildcard, strlen(wildcard))))
			return f;
	}
	for (; p > 0; p = parent_len(path, p))
		if ((f = exact(kind, path, p)) && f->subtree)
			return f;
	return NULL;
}

bool tj_field_has_below(enum tj_field_kind kind, const char *path)
{
	size_t len = strlen(path);

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].kind == kind && strncmp(table[i].path, path, len) == 0 &&
		    (table[i].path[len] == '.' || table[i].path[len] == '['))
			return true;
	return false;
}

#define FIELD_PATH_MAX 256

static int refuse(enum tj_field_kind kind, const char *field, const char *because,
                  const char *reason, struct tj_problem *why)
{
	tj_problem_set(why, reason,
	               "spec.%s is not supported by this controller: %s; remove it%s "
	               "(crds/README.md lists what is supported)",
	               field, because, kind == TJ_FIELD_RUNTIME ? " from the runtime" : "");
	return -EOPNOTSUPP;
}

/* Walks the members of obj (or the items of a list), at path in the table and at field in
 * the message. */
static int walk(enum tj_field_kind kind, const cJSON *obj, const char *path, const char *field,
                const char *reason, struct tj_problem *why)
{
	const cJSON *el;
	int i = 0;

	cJSON_ArrayForEach(el, obj)
	{
		char p[FIELD_PATH_MAX], f[FIELD_PATH_MAX];
		const struct tj_field *fate;
		int index = i++, n;

		if (cJSON_IsNull(el)) /* a null is an absent field */
			continue;
		if (cJSON_IsArray(obj)) {
			n = snprintf(p, sizeof(p), "%s[]", path);
			snprintf(f, sizeof(f), "%s[%d]", field, index);
		} else {
			n = snprintf(p, sizeof(p), "%s%s%s", path, *path ? "." : "",
			             el->string ? el->string : "");
			snprintf(f, sizeof(f), "%s%s%s", field, *field ? "." : "",
			         el->string ? el->string : "");
		}
		/* No field of the table has so long a path: a cut one must not pass for one. */
		if (n >= (int)sizeof(p))
			return refuse(kind, f, "the field is not implemented", reason, why);
		fate = tj_field_find(kind, p);
		/* A list or object whose fields have entries of their own: its members decide. */
		if ((!fate || fate->path[strlen(fate->path) - 1] == '*') &&
		    tj_field_has_below(kind, p)) {
			if (walk(kind, el, p, f, reason, why) < 0)
				return -EOPNOTSUPP;
			continue;
		}
		if (!fate)
			return refuse(kind, f, "the field is not implemented", reason, why);
		if (fate->fate == TJ_FIELD_REFUSED)
			return refuse(kind, f, fate->why, reason, why);
		if (!fate->subtree && tj_field_has_below(kind, p) &&
		    walk(kind, el, p, f, reason, why) < 0)
			return -EOPNOTSUPP;
	}
	return 0;
}

int tj_field_check(enum tj_field_kind kind, const cJSON *spec, const char *reason,
                   struct tj_problem *why)
{
	return walk(kind, spec, "", "", reason, why);
}

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/render/trainjob_support.h"

struct support_case {
	const char *name;
	const char *spec; /* members of the TrainJob's spec besides runtimeRef */
	const char *want; /* the message, NULL: supported */
};

#define REFUSED(field)                                                                             \
	field " is not supported by this controller: the field is not applied to the pods; "       \
	      "remove it (crds/README.md lists what is supported)"

static const struct support_case cases[] = {
	{ "no overrides", "", NULL },
	{ "every field the renderer applies",
	  ",'podTemplateOverrides':[{'targetJobs':[{'name':'node'}],'metadata':{'labels':{'a':'b'}"
	  "},'spec':{'serviceAccountName':'s','nodeSelector':{},'affinity':{},'tolerations':[],"
	  "'volumes':[],'schedulingGates':[],'imagePullSecrets':[],'initContainers':[{'name':'i',"
	  "'env':[]}],'containers':[{'name':'node','volumeMounts':[]}]}}],"
	  "'podSpecOverrides':[{'targetJobs':[{'name':'node'}],'nodeSelector':{'a':'b'}}],"
	  "'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'metadata':{"
	  "'labels':{}},'spec':{'replicatedJobs':[{'name':'node','template':{'metadata':{"
	  "'annotations':{}},'spec':{'template':{'metadata':{},'spec':{'volumes':[]}}}}}]}}}}]",
	  NULL },
	{ "a pod securityContext in podTemplateOverrides",
	  ",'podTemplateOverrides':[{'targetJobs':[{'name':'node'}],'spec':{'securityContext':{}}}"
	  "]",
	  REFUSED("spec.podTemplateOverrides[0].spec.securityContext") },
	{ "a container's resources in podTemplateOverrides",
	  ",'podTemplateOverrides':[{'targetJobs':[{'name':'node'}],'spec':{}},{'targetJobs':[{"
	  "'name':'node'}],'spec':{'containers':[{'name':'node','resources':{}}]}}]",
	  REFUSED("spec.podTemplateOverrides[1].spec.containers[0].resources") },
	{ "hostNetwork in a v2.0 podSpecOverride",
	  ",'podSpecOverrides':[{'targetJobs':[{'name':'node'}],'hostNetwork':true}]",
	  REFUSED("spec.podSpecOverrides[0].hostNetwork") },
	{ "terminationGracePeriodSeconds in a runtime patch (Kubeflow v2.3)",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	  "'terminationGracePeriodSeconds':5}}}}}]}}}}]",
	  NULL },
	{ "a grace period of 0 in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	  "'terminationGracePeriodSeconds':0}}}}}]}}}}]",
	  NULL },
	{ "a negative grace period in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	  "'terminationGracePeriodSeconds':-1}}}}}]}}}}]",
	  "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template."
	  "spec.template.spec.terminationGracePeriodSeconds must be a whole number of seconds "
	  "from 0 to 2147483647" },
	{ "a grace period in seconds and a half",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	  "'terminationGracePeriodSeconds':1.5}}}}}]}}}}]",
	  "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template."
	  "spec.template.spec.terminationGracePeriodSeconds must be a whole number of seconds "
	  "from 0 to 2147483647" },
	{ "a grace period as a string",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	  "'terminationGracePeriodSeconds':'30'}}}}}]}}}}]",
	  "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template."
	  "spec.template.spec.terminationGracePeriodSeconds must be a whole number of seconds "
	  "from 0 to 2147483647" },
	{ "terminationGracePeriodSeconds in podTemplateOverrides",
	  ",'podTemplateOverrides':[{'targetJobs':[{'name':'node'}],'spec':{"
	  "'terminationGracePeriodSeconds':5}}]",
	  REFUSED("spec.podTemplateOverrides[0].spec.terminationGracePeriodSeconds") },
	{ "a container's securityContext in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'template':{'spec':{"
	  "'initContainers':[{'name':'i','securityContext':{}}]}}}}}]}}}}]",
	  REFUSED("spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]."
	          "template.spec.template.spec.initContainers[0].securityContext") },
	/* A Job field has the same fate in a patch as in a runtime: the values that are this
	 * controller's behaviour pass, the others are refused naming the field. */
	{ "the Job fields whose values are the controller's behaviour in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'backoffLimit':0,"
	  "'completionMode':'Indexed','podReplacementPolicy':'Failed'}}}]}}}}]",
	  NULL },
	{ "a backoffLimit other than 0 in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'backoffLimit':3}}}]}}}}]",
	  "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template."
	  "spec.backoffLimit: only 0 is supported by this controller: a step's failed pod is not "
	  "retried by itself, it fails the step at once and the JobSet failurePolicy decides the "
	  "restart (maxRestarts, or trainjob.flame.dev/max-restarts); set backoffLimit to 0 or "
	  "remove it (crds/README.md lists what is supported)" },
	{ "another Job spec field in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'replicatedJobs':[{'name':'node','template':{'spec':{'podFailurePolicy':{}}}}]}}}}]",
	  REFUSED("spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]."
	          "template.spec.podFailurePolicy") },
	{ "a JobSet spec field in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'spec':{"
	  "'failurePolicy':{}}}}}]",
	  REFUSED("spec.runtimePatches[0].trainingRuntimeSpec.template.spec.failurePolicy") },
	{ "a runtime spec field beyond the template in a runtime patch",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'mlPolicy':{}}}]",
	  REFUSED("spec.runtimePatches[0].trainingRuntimeSpec.mlPolicy") },
	{ "JobSet metadata beyond labels and annotations",
	  ",'runtimePatches':[{'manager':'m','trainingRuntimeSpec':{'template':{'metadata':{"
	  "'finalizers':['x']}}}}]",
	  REFUSED("spec.runtimePatches[0].trainingRuntimeSpec.template.metadata.finalizers") },
};

static void test_support_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct support_case *c = &cases[i];
		char buf[4096];
		struct tj_trainjob *job = NULL;
		struct tj_problem why = { "", "" };
		cJSON *j;

		print_message("# case: %s\n", c->name);
		snprintf(buf, sizeof(buf),
		         "{'kind':'TrainJob','metadata':{'name':'vit','namespace':'a'},'spec':{"
		         "'runtimeRef':{'name':'r'}%s}}",
		         c->spec);
		j = jlit(buf);
		assert_int_equal(tj_trainjob_from_json(j, &job), 0);
		assert_null(job->spec_error);
		if (c->want) {
			assert_int_equal(tj_trainjob_support_check(job, &why), -EOPNOTSUPP);
			assert_string_equal(why.reason, "InvalidSpec");
			assert_string_equal(why.message, c->want);
		} else {
			assert_int_equal(tj_trainjob_support_check(job, &why), 0);
		}
		tj_trainjob_free(job);
		cJSON_Delete(j);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_support_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

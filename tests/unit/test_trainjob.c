#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/json.h"
#include "reconcilers/trainjob.h"

/* Every field projected from a full TrainJob, the status included. */
static void test_projection(void **state)
{
	cJSON *j = jlit(
	        "{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob','metadata':{"
	        "'name':'vit','namespace':'team-a','uid':'u1','resourceVersion':'77','generation':"
	        "3,"
	        "'creationTimestamp':'2026-11-29T10:00:00Z','deletionTimestamp':'2026-11-29T10:05:"
	        "00Z',"
	        "'annotations':{'trainjob.flame.dev/max-restarts':'5',"
	        "'trainjob.flame.dev/restart-policy':'Worker',"
	        "'trainjob.flame.dev/node-grace-period-seconds':'15','other':'x',"
	        "'trainjob.flame.dev/priority':'-7','trainjob.flame.dev/stall-timeout':'30m'},"
	        "'labels':{'kueue.x-k8s.io/queue-name':'team-a'}},"
	        "'spec':{'runtimeRef':{'name':'torch-gh200','kind':'ClusterTrainingRuntime',"
	        "'apiGroup':'trainer.kubeflow.org'},'trainer':{'image':'img:1','command':['"
	        "torchrun'],"
	        "'args':['a','b'],'env':[{'name':'X','value':'1'},{'name':'Y'},"
	        "{'name':'Z','valueFrom':{'fieldRef':{'fieldPath':'metadata.name'}}}],'numNodes':4,"
	        "'numProcPerNode':'auto','resourcesPerNode':{'limits':{'nvidia.com/gpu':4}}},"
	        "'podTemplateOverrides':[{'targetJobs':[{'name':'node'}],'spec':{'nodeSelector':{'"
	        "a':'b'}}}],"
	        "'podSpecOverrides':[{'targetJobs':[{'name':'node'}]}],"
	        "'runtimePatches':[{'manager':'m'}],"
	        "'suspend':true,'managedBy':'kueue.x-k8s.io/"
	        "multikueue','activeDeadlineSeconds':600},"
	        "'status':{'state':'Restarting','reason':'WorkerFailed','message':'m','"
	        "restartCount':2,"
	        "'lastFailure':{'rank':1,'node':'n1','pod':'vit-node-0-1-a1','reason':'Error','"
	        "exitCode':3,"
	        "'time':'2026-11-29T10:10:00Z'},'startTime':'2026-11-29T10:01:00Z',"
	        "'completionTime':'2026-11-29T10:20:00.5+01:00','observedGeneration':3,"
	        "'jobsStatus':[{'name':'other','active':9},{'name':'node','active':1,'ready':2,"
	        "'succeeded':3,'failed':4,'suspended':5}],"
	        "'conditions':[{'type':'Created','status':'True','reason':'Old'},"
	        "{'type':'Suspended','status':'False','reason':'Resumed','message':'r',"
	        "'lastTransitionTime':'2026-11-29T10:02:00Z'},"
	        "{'type':'Failed','status':'True','reason':'X','message':'y'}]}}");
	struct tj_trainjob *job = NULL;

	assert_int_equal(tj_trainjob_from_json(j, &job), 0);
	cJSON_Delete(j);
	assert_string_equal(job->name, "vit");
	assert_string_equal(job->namespace, "team-a");
	assert_string_equal(job->uid, "u1");
	assert_string_equal(job->stall_timeout, "30m");
	assert_string_equal(job->resource_version, "77");
	assert_int_equal(job->generation, 3);
	assert_int_equal(job->creation_time, 1795946400);
	assert_int_equal(job->deletion_time, 1795946700);
	assert_string_equal(job->max_restarts, "5");
	assert_string_equal(job->restart_policy, "Worker");
	assert_string_equal(job->node_grace_period, "15");
	assert_string_equal(job->runtime_name, "torch-gh200");
	assert_string_equal(job->runtime_kind, "ClusterTrainingRuntime");
	assert_string_equal(job->runtime_api_group, "trainer.kubeflow.org");
	assert_string_equal(job->image, "img:1");
	assert_int_equal(job->n_command, 1);
	assert_string_equal(job->command[0], "torchrun");
	assert_int_equal(job->n_args, 2);
	assert_string_equal(job->args[1], "b");
	assert_int_equal(job->n_env, 3);
	assert_string_equal(job->env[0].name, "X");
	assert_string_equal(job->env[0].value, "1");
	assert_null(job->env[0].value_from);
	assert_string_equal(job->env[1].value, "");
	assert_null(job->env[2].value);
	assert_string_equal(job->env[2].value_from,
	                    "{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}");
	assert_int_equal(job->num_nodes, 4);
	assert_string_equal(job->num_proc_per_node, "auto");
	assert_string_equal(job->resources_per_node, "{\"limits\":{\"nvidia.com/gpu\":4}}");
	assert_string_equal(job->pod_template_overrides,
	                    "[{\"targetJobs\":[{\"name\":\"node\"}],\"spec\":{\"nodeSelector\":{"
	                    "\"a\":\"b\"}}}]");
	assert_string_equal(job->pod_spec_overrides, "[{\"targetJobs\":[{\"name\":\"node\"}]}]");
	assert_string_equal(job->runtime_patches, "[{\"manager\":\"m\"}]");
	assert_true(job->suspend);
	assert_string_equal(job->managed_by, "kueue.x-k8s.io/multikueue");
	assert_false(tj_trainjob_is_ours(job));
	assert_string_equal(job->priority, "-7");
	assert_true(job->kueue);
	assert_int_equal(job->active_deadline_seconds, 600);
	assert_null(job->spec_error);

	assert_int_equal(job->status.state, TJ_STATE_RESTARTING);
	assert_string_equal(job->status.reason, "WorkerFailed");
	assert_string_equal(job->status.message, "m");
	assert_int_equal(job->status.restart_count, 2);
	assert_int_equal(job->status.last_failure.rank, 1);
	assert_string_equal(job->status.last_failure.node, "n1");
	assert_string_equal(job->status.last_failure.pod, "vit-node-0-1-a1");
	assert_string_equal(job->status.last_failure.reason, "Error");
	assert_int_equal(job->status.last_failure.exit_code, 3);
	assert_int_equal(job->status.last_failure.time, 1795947000);
	assert_int_equal(job->status.start_time, 1795946460);
	assert_int_equal(job->status.completion_time, 1795947600 - 3600);
	assert_int_equal(job->status.observed_generation, 3);
	/* Every step's entry, in order. */
	assert_true(job->status.has_jobs_status);
	assert_int_equal(job->status.n_jobs, 2);
	assert_string_equal(job->status.jobs[0].name, "other");
	assert_int_equal(job->status.jobs[0].active, 9);
	assert_int_equal(job->status.jobs[0].ready, 0);
	assert_string_equal(job->status.jobs[1].name, "node");
	assert_int_equal(job->status.jobs[1].active, 1);
	assert_int_equal(job->status.jobs[1].ready, 2);
	assert_int_equal(job->status.jobs[1].succeeded, 3);
	assert_int_equal(job->status.jobs[1].failed, 4);
	assert_int_equal(job->status.jobs[1].suspended, 5);
	/* Types we do not own are dropped; Unknown or False reads as false. */
	assert_int_equal(job->status.n_conditions, 2);
	assert_int_equal(job->status.conditions[0].type, TJ_CONDITION_SUSPENDED);
	assert_false(job->status.conditions[0].status);
	assert_string_equal(job->status.conditions[0].reason, "Resumed");
	assert_int_equal(job->status.conditions[0].last_transition_time, 1795946520);
	assert_int_equal(job->status.conditions[1].type, TJ_CONDITION_FAILED);
	assert_true(job->status.conditions[1].status);
	tj_trainjob_free(job);
}

/* A minimal job: every optional field unset. */
static void test_minimal(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'torch-gh200'}}");
	struct tj_problem why = { "", "" };

	assert_null(job->image);
	assert_null(job->command);
	assert_int_equal(job->n_args, 0);
	assert_int_equal(job->n_env, 0);
	assert_int_equal(job->num_nodes, 0);
	assert_null(job->num_proc_per_node);
	assert_null(job->resources_per_node);
	assert_false(job->suspend);
	assert_true(tj_trainjob_is_ours(job));
	assert_int_equal(job->status.state, TJ_STATE_NONE);
	assert_int_equal(job->status.last_failure.rank, -1);
	assert_false(job->status.has_jobs_status);
	assert_int_equal(tj_trainjob_validate(job, &why), 0);
	tj_trainjob_free(job);
}

static void test_no_name_is_einval(void **state)
{
	const char *objs[] = {
		"{'metadata':{'namespace':'a'}}",
		"{'metadata':{'name':'a'}}",
		"{'metadata':{'name':'','namespace':'a'}}",
		"[]",
	};

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		cJSON *j = jlit(objs[i]);
		struct tj_trainjob *job = (struct tj_trainjob *)0x1;

		assert_int_equal(tj_trainjob_from_json(j, &job), -EINVAL);
		assert_ptr_equal(job, (struct tj_trainjob *)0x1);
		cJSON_Delete(j);
	}
}

struct validate_case {
	const char *name;
	const char *annotations;
	const char *spec;
	const char *job_name;
	const char *want_reason; /* NULL: valid */
	const char *want_message;
};

static const struct validate_case validate_cases[] = {
	{ "valid", NULL, "{'runtimeRef':{'name':'r'},'trainer':{'numNodes':16,'numProcPerNode':4}}",
	  NULL, NULL, NULL },
	{ "numProcPerNode as a string integer", NULL,
	  "{'runtimeRef':{'name':'r'},'trainer':{'numProcPerNode':'8'}}", NULL, NULL, NULL },
	{ "no runtimeRef", NULL, "{}", NULL, "InvalidSpec",
	  "spec.runtimeRef.name: required; name a ClusterTrainingRuntime such as torch-gh200" },
	{ "numNodes zero", NULL, "{'runtimeRef':{'name':'r'},'trainer':{'numNodes':0}}", NULL,
	  "InvalidSpec", "spec.trainer.numNodes: must be between 1 and 4096, got 0" },
	{ "numNodes a string", NULL, "{'runtimeRef':{'name':'r'},'trainer':{'numNodes':'4'}}", NULL,
	  "InvalidSpec", "spec.trainer.numNodes: must be an integer" },
	{ "numProcPerNode bad", NULL,
	  "{'runtimeRef':{'name':'r'},'trainer':{'numProcPerNode':'many'}}", NULL, "InvalidSpec",
	  "spec.trainer.numProcPerNode: 'many' is not a positive integer (at most 1024) or one of "
	  "auto, cpu, gpu" },
	{ "numProcPerNode zero", NULL, "{'runtimeRef':{'name':'r'},'trainer':{'numProcPerNode':0}}",
	  NULL, "InvalidSpec",
	  "spec.trainer.numProcPerNode: '0' is not a positive integer (at most 1024) or one of "
	  "auto, cpu, gpu" },
	{ "args not strings", NULL, "{'runtimeRef':{'name':'r'},'trainer':{'args':['a',1]}}", NULL,
	  "InvalidSpec", "spec.trainer.args: must be a list of strings" },
	{ "env without a name", NULL,
	  "{'runtimeRef':{'name':'r'},'trainer':{'env':[{'value':'1'}]}}", NULL, "InvalidSpec",
	  "spec.trainer.env: every item needs a name and a string value or valueFrom" },
	{ "resourcesPerNode a list", NULL,
	  "{'runtimeRef':{'name':'r'},'trainer':{'resourcesPerNode':[]}}", NULL, "InvalidSpec",
	  "spec.trainer.resourcesPerNode: must be an object" },
	{ "overrides an object", NULL, "{'runtimeRef':{'name':'r'},'podTemplateOverrides':{}}",
	  NULL, "InvalidSpec", "spec.podTemplateOverrides: must be a list" },
	{ "suspend a string", NULL, "{'runtimeRef':{'name':'r'},'suspend':'yes'}", NULL,
	  "InvalidSpec", "spec.suspend: must be true or false" },
	{ "deadline zero", NULL, "{'runtimeRef':{'name':'r'},'activeDeadlineSeconds':0}", NULL,
	  "InvalidSpec", "spec.activeDeadlineSeconds: must be between 1 and 1099511627776, got 0" },
	{ "unknown kind", NULL, "{'runtimeRef':{'name':'r','kind':'Runtime'}}", NULL,
	  "TrainingRuntimeNotSupported",
	  "spec.runtimeRef.kind: 'Runtime' is not supported; use ClusterTrainingRuntime or "
	  "TrainingRuntime" },
	{ "unknown group", NULL, "{'runtimeRef':{'name':'r','apiGroup':'example.com'}}", NULL,
	  "TrainingRuntimeNotSupported",
	  "spec.runtimeRef.apiGroup: 'example.com' is not supported; use trainer.kubeflow.org" },
	{ "max-restarts not a number", "{'trainjob.flame.dev/max-restarts':'three'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/max-restarts]: 'three' is not an integer "
	  "between "
	  "0 and 1000" },
	{ "restart-policy unknown", "{'trainjob.flame.dev/restart-policy':'All'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/restart-policy]: 'All' is not Gang or Worker" },
	{ "priority not an integer", "{'trainjob.flame.dev/priority':'high'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/priority]: 'high' is not an integer between "
	  "-1000000000 and 1000000000" },
	{ "priority out of range", "{'trainjob.flame.dev/priority':'2000000000'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/priority]: '2000000000' is not an integer "
	  "between -1000000000 and 1000000000" },
	{ "node grace period negative", "{'trainjob.flame.dev/node-grace-period-seconds':'-5'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/node-grace-period-seconds]: '-5' is not an "
	  "integer between 0 and 86400" },
	{ "node grace period with a unit", "{'trainjob.flame.dev/node-grace-period-seconds':'30s'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, "InvalidSpec",
	  "metadata.annotations[trainjob.flame.dev/node-grace-period-seconds]: '30s' is not an "
	  "integer between 0 and 86400" },
	{ "node grace period zero", "{'trainjob.flame.dev/node-grace-period-seconds':'0'}",
	  "{'runtimeRef':{'name':'r'}}", NULL, NULL, NULL },
	/* 63 - len("-node-0-") - len("15") = 53 characters at most for 16 nodes. */
	{ "name at the hostname limit", NULL,
	  "{'runtimeRef':{'name':'r'},'trainer':{'numNodes':16}}",
	  "a2345678901234567890123456789012345678901234567890123", NULL, NULL },
	{ "name over the hostname limit", NULL,
	  "{'runtimeRef':{'name':'r'},'trainer':{'numNodes':16}}",
	  "a23456789012345678901234567890123456789012345678901234", "InvalidSpec",
	  "metadata.name: 'a23456789012345678901234567890123456789012345678901234' is too long: "
	  "the "
	  "pod hostnames <name>-node-0-<rank> must fit in 63 characters, so use at most 53 "
	  "characters" },
};

static void test_validate_table(void **state)
{
	for (size_t i = 0; i < sizeof(validate_cases) / sizeof(validate_cases[0]); i++) {
		const struct validate_case *c = &validate_cases[i];
		char buf[2048];
		struct tj_trainjob *job = NULL;
		struct tj_problem why = { "", "" };
		cJSON *j;

		print_message("# case: %s\n", c->name);
		snprintf(buf, sizeof(buf),
		         "{'metadata':{'name':'%s','namespace':'n','annotations':%s},'spec':%s}",
		         c->job_name ? c->job_name : "vit", c->annotations ? c->annotations : "{}",
		         c->spec);
		j = jlit(buf);
		assert_int_equal(tj_trainjob_from_json(j, &job), 0);
		cJSON_Delete(j);
		assert_int_equal(tj_trainjob_validate(job, &why), c->want_reason ? -EINVAL : 0);
		assert_string_equal(why.reason, c->want_reason ? c->want_reason : "");
		assert_string_equal(why.message, c->want_message ? c->want_message : "");
		tj_trainjob_free(job);
	}
}

/* A status survives a round trip through its JSON; unset fields are written as null. */
/* A queued job's place and expected start go out and come back; a status without them
 * reads as not queued. */
static void test_queue_fields_round_trip(void **state)
{
	struct tj_trainjob_status s = { .state = TJ_STATE_QUEUED,
		                        .reason = "Resources",
		                        .message = "position 2 of 5 in gh200",
		                        .last_failure = { .rank = -1, .exit_code = -1 },
		                        .expected_start_time = 1795953600,
		                        .queue_position = 2 },
	                          back;
	cJSON *j = tj_trainjob_status_to_json(&s);

	assert_string_equal(tj_json_string(j, "state"), "Queued");
	assert_string_equal(tj_json_string(j, "expectedStartTime"), "2026-11-29T12:00:00Z");
	assert_int_equal(cJSON_GetObjectItem(j, "queuePosition")->valueint, 2);
	assert_true(cJSON_IsNull(cJSON_GetObjectItem(j, "startTime")));
	tj_trainjob_status_from_json(j, &back);
	assert_true(tj_trainjob_status_equal(&s, &back));
	assert_int_equal(back.queue_position, 2);
	assert_int_equal(back.expected_start_time, 1795953600);
	back.queue_position = 3;
	assert_false(tj_trainjob_status_equal(&s, &back));
	cJSON_Delete(j);

	j = jlit("{'state':'Running','queuePosition':-4}");
	tj_trainjob_status_from_json(j, &back);
	assert_int_equal(back.queue_position, 0);
	assert_int_equal(back.expected_start_time, 0);
	cJSON_Delete(j);
}

static void test_status_round_trip(void **state)
{
	struct tj_trainjob_status s = { 0 }, back;
	cJSON *j;

	s.state = TJ_STATE_FAILED;
	strcpy(s.reason, "ReachedMaxRestarts");
	strcpy(s.message, "rank 0 failed");
	s.restart_count = 3;
	s.last_failure =
	        (struct tj_failure){ 0, "n1", "p", "OOMKilled", 137, 1795946400, "Killed\n" };
	s.start_time = 1795946400;
	s.deadline = 1795950000;
	s.cleanup_time = 1795946460;
	s.observed_generation = 4;
	s.has_jobs_status = true;
	s.jobs[0] = (struct tj_jobs_status){ "node", 1, 2, 3, 4, 5 };
	s.jobs[1] = (struct tj_jobs_status){ "dataset-initializer", 0, 0, 1, 0, 0 };
	s.n_jobs = 2;
	s.n_conditions = 1;
	s.conditions[0] = (struct tj_condition){ TJ_CONDITION_FAILED, true, "ReachedMaxRestarts",
		                                 "rank 0 failed", 1795946401 };
	j = tj_trainjob_status_to_json(&s);
	assert_json_equal(
	        j, "{'state':'Failed','reason':'ReachedMaxRestarts','message':'rank 0 failed',"
	           "'restartCount':3,'lastFailure':{'rank':0,'node':'n1','pod':'p',"
	           "'reason':'OOMKilled','time':'2026-11-29T10:00:00Z','exitCode':137,"
	           "'message':'Killed\\n'},"
	           "'startTime':'2026-11-29T10:00:00Z','completionTime':null,'expectedStartTime':"
	           "null,'deadline':'2026-11-29T11:00:00Z','cleanupTime':'2026-11-29T10:01:00Z',"
	           "'queuePosition':null,"
	           "'observedGeneration':4,'jobsStatus':[{'name':'node','active':1,'ready':2,"
	           "'succeeded':3,'failed':4,'suspended':5},{'name':'dataset-initializer',"
	           "'active':0,'ready':0,'succeeded':1,'failed':0,'suspended':0}],'conditions':[{'"
	           "type':'Failed',"
	           "'status':'True','reason':'ReachedMaxRestarts','message':'rank 0 failed',"
	           "'lastTransitionTime':'2026-11-29T10:00:01Z'}]}");
	tj_trainjob_status_from_json(j, &back);
	assert_true(tj_trainjob_status_equal(&s, &back));
	back.deadline = 0;
	assert_false(tj_trainjob_status_equal(&s, &back));
	back.deadline = s.deadline;
	back.jobs[1].ready = 9;
	assert_false(tj_trainjob_status_equal(&s, &back));
	back.jobs[1].ready = 0;
	back.n_jobs = 1;
	assert_false(tj_trainjob_status_equal(&s, &back));
	tj_trainjob_status_from_json(j, &back);
	back.last_failure.message[0] = '\0';
	assert_false(tj_trainjob_status_equal(&s, &back));
	back = s;
	back.cleanup_time = 0;
	assert_false(tj_trainjob_status_equal(&s, &back));
	cJSON_Delete(j);
	/* A failure without a message clears the one of the failure before (merge patch). */
	s.last_failure.message[0] = '\0';
	j = tj_trainjob_status_to_json(&s);
	assert_true(cJSON_IsNull(
	        cJSON_GetObjectItem(cJSON_GetObjectItem(j, "lastFailure"), "message")));
	cJSON_Delete(j);
}

/* status.infrastructureRestarts goes out once there is one and comes back; absent or
 * negative reads as none. */
static void test_infrastructure_restarts_round_trip(void **state)
{
	struct tj_trainjob_status s = { .state = TJ_STATE_RESTARTING,
		                        .restart_count = 3,
		                        .infrastructure_restarts = 2,
		                        .last_failure = { .rank = -1, .exit_code = -1 } },
	                          back;
	cJSON *j = tj_trainjob_status_to_json(&s);

	assert_int_equal(cJSON_GetObjectItem(j, "restartCount")->valueint, 3);
	assert_int_equal(cJSON_GetObjectItem(j, "infrastructureRestarts")->valueint, 2);
	tj_trainjob_status_from_json(j, &back);
	assert_true(tj_trainjob_status_equal(&s, &back));
	back.infrastructure_restarts = 1;
	assert_false(tj_trainjob_status_equal(&s, &back));
	cJSON_Delete(j);

	s.infrastructure_restarts = 0;
	j = tj_trainjob_status_to_json(&s);
	assert_null(cJSON_GetObjectItem(j, "infrastructureRestarts"));
	cJSON_Delete(j);

	j = jlit("{'state':'Running','restartCount':2,'infrastructureRestarts':-1}");
	tj_trainjob_status_from_json(j, &back);
	assert_int_equal(back.restart_count, 2);
	assert_int_equal(back.infrastructure_restarts, 0);
	cJSON_Delete(j);
}

/* The digest of a report's progress (what the stall clock watches): its percentage and its
 * metrics count, in order; its remaining time and lastUpdatedTime do not. */
static uint64_t digest_of(const char *trainer_status)
{
	char buf[512];
	struct tj_trainjob_status st;
	cJSON *j;

	snprintf(buf, sizeof(buf), "{'trainerStatus':%s}", trainer_status);
	j = jlit(buf);
	tj_trainjob_status_from_json(j, &st);
	cJSON_Delete(j);
	return st.progress_digest;
}

static void test_progress_digest(void **state)
{
	uint64_t base = digest_of("{'progressPercentage':42,'estimatedRemainingSeconds':600,"
	                          "'metrics':[{'name':'loss','value':'0.7'},{'name':'step','value':"
	                          "'420'}],'lastUpdatedTime':'2026-11-29T10:00:00Z'}");

	assert_int_not_equal(base, 0);
	/* No report, or one without progress: 0. */
	assert_int_equal(digest_of("null"), 0);
	assert_int_equal(digest_of("{'estimatedRemainingSeconds':600,'metrics':[],"
	                           "'lastUpdatedTime':'2026-11-29T10:00:00Z'}"),
	                 0);
	/* The same progress reported again, later, with another remaining time. */
	assert_int_equal(digest_of("{'progressPercentage':42,'estimatedRemainingSeconds':540,"
	                           "'metrics':[{'name':'loss','value':'0.7'},{'name':'step',"
	                           "'value':'420'}],'lastUpdatedTime':'2026-11-29T10:05:00Z'}"),
	                 base);
	/* Any change of the percentage or the metrics is progress. */
	assert_int_not_equal(digest_of("{'progressPercentage':43,'metrics':[{'name':'loss','value':"
	                               "'0.7'},{'name':'step','value':'420'}]}"),
	                     base);
	assert_int_not_equal(digest_of("{'progressPercentage':42,'metrics':[{'name':'loss','value':"
	                               "'0.7'},{'name':'step','value':'421'}]}"),
	                     base);
	assert_int_not_equal(digest_of("{'progressPercentage':42,'metrics':[{'name':'step','value':"
	                               "'420'},{'name':'loss','value':'0.7'}]}"),
	                     base);
	assert_int_not_equal(digest_of("{'progressPercentage':42,'metrics':[{'name':'loss','value':"
	                               "'0.7'}]}"),
	                     base);
	assert_int_not_equal(digest_of("{'metrics':[{'name':'loss','value':'0.7'},{'name':'step',"
	                               "'value':'420'}]}"),
	                     base);
	/* Metrics alone are progress too; the strings' bounds count. */
	assert_int_not_equal(digest_of("{'metrics':[{'name':'ab','value':'c'}]}"), 0);
	assert_int_not_equal(digest_of("{'metrics':[{'name':'ab','value':'c'}]}"),
	                     digest_of("{'metrics':[{'name':'a','value':'bc'}]}"));
}

/* Parsing is tj_rfc3339_parse's, tested in test_rfc3339.c. */
static void test_time_format(void **state)
{
	char buf[21];

	tj_time_format(1795946400, buf);
	assert_string_equal(buf, "2026-11-29T10:00:00Z");
	tj_time_format(0, buf);
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_minimal),
		cmocka_unit_test(test_no_name_is_einval),
		cmocka_unit_test(test_validate_table),
		cmocka_unit_test(test_status_round_trip),
		cmocka_unit_test(test_infrastructure_restarts_round_trip),
		cmocka_unit_test(test_progress_digest),
		cmocka_unit_test(test_time_format),
		cmocka_unit_test(test_queue_fields_round_trip),
	};
	return cmocka_run_group_tests_name("trainjob", tests, NULL, NULL);
}

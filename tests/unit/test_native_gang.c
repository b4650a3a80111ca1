#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "controller/discovery.h"
#include "fixtures.h"
#include "kube/request.h"
#include "reconcilers/json.h"
#include "reconcilers/render/native_gang.h"
#include "scripted_server.h"

#define SPEC2 "{'runtimeRef':{'name':'torch-gh200'},'trainer':{'numNodes':2}}"

/* The resources of scheduling.k8s.io/v1alpha2 as a 1.36 API server lists them with the
 * feature gates on (the verbs cut to what matters). */
#define SERVED_DOC                                                                                 \
	"{'kind':'APIResourceList','apiVersion':'v1','groupVersion':'scheduling.k8s.io/v1alpha2'," \
	"'resources':[{'name':'podgroups','namespaced':true,'kind':'PodGroup','verbs':['create',"  \
	"'delete','get','list','watch']},{'name':'podgroups/status','namespaced':true,'kind':"     \
	"'PodGroup','verbs':['get','patch','update']},{'name':'workloads','namespaced':true,"      \
	"'kind':'Workload','verbs':['create','delete','get','list','watch']}]}"

struct served_case {
	const char *name;
	const char *doc; /* NULL: no document (404) */
	bool want;
};

static const struct served_case served_cases[] = {
	{ "both resources, creatable", SERVED_DOC, true },
	{ "no document", NULL, false },
	{ "another group version",
	  "{'groupVersion':'scheduling.k8s.io/v1alpha1','resources':[{'name':'workloads',"
	  "'verbs':['create']},{'name':'podgroups','verbs':['create']}]}",
	  false },
	{ "workloads only",
	  "{'groupVersion':'scheduling.k8s.io/v1alpha2','resources':[{'name':'workloads',"
	  "'verbs':['create']}]}",
	  false },
	{ "podgroups that cannot be created",
	  "{'groupVersion':'scheduling.k8s.io/v1alpha2','resources':[{'name':'workloads',"
	  "'verbs':['create']},{'name':'podgroups','verbs':['get','list']}]}",
	  false },
	{ "resources that are not a list",
	  "{'groupVersion':'scheduling.k8s.io/v1alpha2','resources':{'name':'workloads'}}", false },
	{ "verbs that are not strings",
	  "{'groupVersion':'scheduling.k8s.io/v1alpha2','resources':[{'name':'workloads',"
	  "'verbs':[1]},{'name':'podgroups','verbs':['create']}]}",
	  false },
};

static void test_served(void **state)
{
	for (size_t i = 0; i < sizeof(served_cases) / sizeof(served_cases[0]); i++) {
		const struct served_case *c = &served_cases[i];
		cJSON *doc = c->doc ? jlit(c->doc) : NULL;

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_native_gang_served(doc), c->want);
		cJSON_Delete(doc);
	}
}

#define CHILD_META(kind)                                                                           \
	"'apiVersion':'scheduling.k8s.io/v1alpha2','kind':'" kind "','metadata':{'name':'vit',"    \
	"'namespace':'team-a','labels':{'trainer.kubeflow.org/trainjob-name':'vit'},"              \
	"'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"      \
	"'name':'vit','uid':'uid-vit','controller':true,'blockOwnerDeletion':true}]}"

static void test_objects(void **state)
{
	struct tj_trainjob *job = make_job(SPEC2);
	cJSON *obj = NULL, *pod;

	assert_int_equal(tj_native_gang_workload(job, 2, &obj), 0);
	assert_json_equal(
	        obj, "{" CHILD_META("Workload") ",'spec':{'controllerRef':{'apiGroup':'trainer."
	                                        "kubeflow.org','kind':'TrainJob','name':'vit'},"
	                                        "'podGroupTemplates':[{'name':'node',"
	                                        "'schedulingPolicy':{'gang':{'minCount':2}}}]}}");
	cJSON_Delete(obj);
	obj = NULL;
	assert_int_equal(tj_native_gang_pod_group(job, 2, &obj), 0);
	assert_json_equal(obj, "{" CHILD_META("PodGroup") ",'spec':{'podGroupTemplateRef':{"
	                                                  "'workload':{'workloadName':'vit',"
	                                                  "'podGroupTemplateName':'node'}},"
	                                                  "'schedulingPolicy':{'gang':{'minCount':"
	                                                  "2}}}}");
	cJSON_Delete(obj);
	obj = NULL;
	assert_int_equal(tj_native_gang_workload(job, 0, &obj), -EINVAL);
	assert_int_equal(tj_native_gang_pod_group(job, -1, &obj), -EINVAL);
	assert_null(obj);

	pod = jlit("{'metadata':{'name':'vit-node-0-0-a0'},'spec':{'containers':[]}}");
	assert_int_equal(tj_native_gang_attach(pod, job), 0);
	assert_json_equal(pod, "{'metadata':{'name':'vit-node-0-0-a0'},'spec':{'containers':[],"
	                       "'schedulingGroup':{'podGroupName':'vit'}}}");
	cJSON_Delete(pod);
	tj_trainjob_free(job);
}

struct fixture {
	uv_loop_t loop;
	struct server server;
	struct tj_client *client;
};

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	uv_loop_init(&fx->loop);
	server_start(&fx->server, &fx->loop);
	fx->client = server_client_new(&fx->server);
	server_capture_log(&fx->server);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	fx->client = tj_client_free(fx->client);
	server_stop(&fx->server);
	uv_run(&fx->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&fx->loop), 0);
	free(fx);
	return 0;
}

struct discovery_case {
	const char *name;
	int status;
	const char *body;
	int want_rc;
	bool want_served;
};

static const struct discovery_case discovery_cases[] = {
	{ "the API is served", 200, NULL, 0, true },
	{ "the version is not served", 404,
	  API_ERROR(404, "NotFound",
	            "the server could not find "
	            "the requested resource"),
	  0, false },
	{ "the answer is a refusal", 403, API_ERROR(403, "Forbidden", "discovery is forbidden"),
	  -EREMOTEIO, false },
};

/* case: the controller asks the one discovery document at start, and starts only on an
 * answer that says yes or no. */
static void test_discovery(void **state)
{
	struct fixture *fx = *state;
	/* The body of the served case, in real JSON. */
	cJSON *doc = jlit(SERVED_DOC);
	char *served_body = cJSON_PrintUnformatted(doc);

	cJSON_Delete(doc);
	for (size_t i = 0; i < sizeof(discovery_cases) / sizeof(discovery_cases[0]); i++) {
		const struct discovery_case *c = &discovery_cases[i];
		struct reply r = {
			.method = "GET",
			.path = "/apis/scheduling.k8s.io/v1alpha2",
			.status = c->status,
			.body = c->body ? c->body : served_body,
		};
		bool served = !c->want_served;
		int before = fx->server.n_seen;

		print_message("# case: %s\n", c->name);
		server_script(&fx->server, &r, 1);
		assert_int_equal(tj_discover_native_gang(fx->client, &served), c->want_rc);
		assert_int_equal(fx->server.n_seen, before + 1);
		assert_string_equal(fx->server.seen[before].path,
		                    "/apis/scheduling.k8s.io/v1alpha2");
		if (c->want_rc == 0)
			assert_int_equal(served, c->want_served);
		else
			assert_int_equal(served, !c->want_served); /* untouched */
	}
	free(served_body);
}

static void never_called(struct tj_response *resp, void *userdata)
{
	fail_msg("a cancelled request answered");
}

/* case: only discovery documents may be asked this way, never an object or a query. */
static void test_discovery_paths(void **state)
{
	struct fixture *fx = *state;
	static const char *const accepted[] = { "/api", "/apis", "/apis/scheduling.k8s.io",
		                                "/apis/scheduling.k8s.io/v1alpha2" };
	static const char *const refused[] = {
		"/apis/scheduling.k8s.io/v1alpha2/podgroups",
		"/apis/scheduling.k8s.io/v1alpha2?watch=1",
		"/apis/../api",
		"/apis//v1",
		"/apis/",
		"/apisx",
		"/api/v1",
		"apis",
		"",
	};

	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		print_message("# refused: '%s'\n", refused[i]);
		assert_int_equal(
		        tj_kube_get_discovery(fx->client, refused[i], never_called, NULL, NULL),
		        -EINVAL);
	}
	assert_int_equal(tj_kube_get_discovery(fx->client, NULL, never_called, NULL, NULL),
	                 -EINVAL);
	for (size_t i = 0; i < sizeof(accepted) / sizeof(accepted[0]); i++) {
		struct tj_request *req = NULL;

		print_message("# accepted: '%s'\n", accepted[i]);
		assert_int_equal(
		        tj_kube_get_discovery(fx->client, accepted[i], never_called, NULL, &req),
		        0);
		assert_non_null(req);
		tj_request_cancel(req);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_served),
		cmocka_unit_test(test_objects),
		cmocka_unit_test_setup_teardown(test_discovery, setup, teardown),
		cmocka_unit_test_setup_teardown(test_discovery_paths, setup, teardown),
	};
	return cmocka_run_group_tests_name("native_gang", tests, NULL, NULL);
}

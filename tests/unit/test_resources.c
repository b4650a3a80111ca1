/* A pod's effective requests as the scheduler computes them: containers summed, init
 * containers as a maximum, sidecars in both, pod-level resources, overhead, limits standing
 * for missing requests, extended resources, and the quantities that are refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "informers/resources.h"

struct requests_case {
	const char *name;
	const char *spec; /* JSON with ' for " */
	int rc;
	struct {
		int64_t cpu_milli, memory;
		uint8_t n_extended;
		struct tj_extended_resource extended[TJ_RESOURCES_MAX_EXTENDED];
	} want;
};

static const struct requests_case cases[] = {
	{ "no spec fields", "{}", 0, { 0, 0, 0, { { 0 } } } },
	{ "a container without resources",
	  "{'containers':[{'name':'c'}]}",
	  0,
	  { 0, 0, 0, { { 0 } } } },
	{ "one container",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'500m',"
	  "'memory':'1Gi'}}}]}",
	  0,
	  { 500, 1073741824, 0, { { 0 } } } },
	{ "containers are summed",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi',"
	  "'nvidia.com/gpu':'4'}}},{'name':'c','resources':{'requests':{'cpu':'250m',"
	  "'memory':'512Mi'}}}]}",
	  0,
	  { 1250, 1610612736, 1, { { "nvidia.com/gpu", 4 } } } },
	{ "limits stand for missing requests, resource by resource",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'},'limits':{'cpu':'2',"
	  "'memory':'2Gi','nvidia.com/gpu':4}}}]}",
	  0,
	  { 1000, 2147483648, 1, { { "nvidia.com/gpu", 4 } } } },
	{ "init containers count as their maximum, when above the sum",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi'}}}],"
	  "'initContainers':[{'name':'c','resources':{'requests':{'cpu':'3'}}},"
	  "{'name':'c','resources':{'requests':{'cpu':'2','memory':'4Gi'}}}]}",
	  0,
	  { 3000, 4294967296, 0, { { 0 } } } },
	{ "init containers below the sum change nothing",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'4'}}}],"
	  "'initContainers':[{'name':'c','resources':{'requests':{'cpu':'2'}}}]}",
	  0,
	  { 4000, 0, 0, { { 0 } } } },
	/* The sidecar (1 CPU) runs beside the second init container (2 CPUs): 3 at most while
	 * initialising; beside the container (1 CPU) it makes 2. */
	{ "sidecars add to the sum and to the init containers after them",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}],"
	  "'initContainers':[{'name':'c','resources':{'requests':{'cpu':'2'}}},"
	  "{'name':'s','restartPolicy':'Always','resources':{'requests':{'cpu':'1',"
	  "'memory':'100Mi'}}},{'name':'c','resources':{'requests':{'cpu':'2'}}}]}",
	  0,
	  { 3000, 104857600, 0, { { 0 } } } },
	{ "a sidecar alone adds to the sum",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1'}}}],"
	  "'initContainers':[{'name':'s','restartPolicy':'Always','resources':{'requests':{'cpu':'"
	  "500m'}}}]}",
	  0,
	  { 1500, 0, 0, { { 0 } } } },
	{ "overhead is added",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi'}}}],"
	  "'overhead':{'cpu':'250m','memory':'120Mi'}}",
	  0,
	  { 1250, 1199570944, 0, { { 0 } } } },
	{ "pod-level resources replace the containers' cpu and memory",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1','memory':'1Gi',"
	  "'nvidia.com/gpu':'1'}}}],'resources':{'limits':{'memory':'3Gi'},'requests':{'cpu':'2'}},"
	  "'overhead':{'cpu':'100m'}}",
	  0,
	  { 2100, 3221225472, 1, { { "nvidia.com/gpu", 1 } } } },
	{ "native resources are not extended ones",
	  "{'containers':[{'name':'c','resources':{'requests':{'ephemeral-storage':'10Gi',"
	  "'hugepages-2Mi':'1Gi','kubernetes.io/foo':'1','a.kubernetes.io/b':'1',"
	  "'pods':'1'}}}]}",
	  0,
	  { 0, 0, 0, { { 0 } } } },
	{ "extended resources of several containers",
	  "{'containers':[{'name':'c','resources':{'requests':{'rdma/hca':'1'}}},"
	  "{'name':'c','resources':{'requests':{'nvidia.com/gpu':'2','rdma/hca':'1'}}}]}",
	  0,
	  { 0, 0, 2, { { "rdma/hca", 2 }, { "nvidia.com/gpu", 2 } } } },
	{ "beyond two extended resources the first ones are kept",
	  "{'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4',"
	  "'rdma/hca':'1','x.io/y':'7','cpu':'1'}}}]}",
	  1,
	  { 1000, 0, 2, { { "nvidia.com/gpu", 4 }, { "rdma/hca", 1 } } } },
	{ "an extended resource of the overhead is met last",
	  "{'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':'4'}}}],"
	  "'overhead':{'x.io/y':'1'}}",
	  0,
	  { 0, 0, 2, { { "nvidia.com/gpu", 4 }, { "x.io/y", 1 } } } },
	{ "quantities past int64 saturate, and so do their sums",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1E','memory':'8Ei'}}},"
	  "{'name':'c','resources':{'requests':{'cpu':'1','memory':'1'}}}]}",
	  0,
	  { INT64_MAX, INT64_MAX, 0, { { 0 } } } },
	{ "mistyped parts are skipped",
	  "{'containers':{'a':1},'initContainers':[7,{'resources':[]},"
	  "{'resources':{'requests':'1'}}],'overhead':[1]}",
	  0,
	  { 0, 0, 0, { { 0 } } } },
	/* Refused: the API server refuses these, so only a pod of our own can have them. */
	{ "a malformed request",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':'1 cpu'}}}]}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	{ "a malformed limit",
	  "{'containers':[{'name':'c','resources':{'limits':{'memory':'1Gb'}}}]}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	{ "a negative request",
	  "{'containers':[{'name':'c','resources':{'requests':{'nvidia.com/gpu':-1}}}]}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	{ "a huge negative request",
	  "{'containers':[{'name':'c','resources':{'requests':{'memory':'-1e30'}}}]}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	{ "a request that is not a quantity",
	  "{'containers':[{'name':'c','resources':{'requests':{'cpu':true}}}]}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	{ "a malformed init container",
	  "{'initContainers':[{'name':'c','resources':{'requests':{'cpu':'x'}}}]}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	{ "a malformed overhead", "{'overhead':{'cpu':'1 '}}", -EINVAL, { 0, 0, 0, { { 0 } } } },
	{ "a malformed pod-level request",
	  "{'resources':{'limits':{'memory':'lots'}}}",
	  -EINVAL,
	  { 0, 0, 0, { { 0 } } } },
	/* What is not counted is not judged. */
	{ "a malformed resource that is not counted",
	  "{'containers':[{'name':'c','resources':{'requests':{'ephemeral-storage':'lots',"
	  "'cpu':'1'}}}]}",
	  0,
	  { 1000, 0, 0, { { 0 } } } },
};

static void test_requests_table(void **state)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct requests_case *c = &cases[i];
		cJSON *spec = jlit(c->spec);
		struct tj_pod_resources r = { .cpu_milli = -42 };

		print_message("# case: %s\n", c->name);
		assert_int_equal(tj_pod_spec_requests(spec, &r), c->rc);
		if (c->rc < 0) {
			assert_int_equal(r.cpu_milli, -42); /* untouched */
			cJSON_Delete(spec);
			continue;
		}
		assert_int_equal(r.cpu_milli, c->want.cpu_milli);
		assert_int_equal(r.memory, c->want.memory);
		assert_int_equal(r.n_extended, c->want.n_extended);
		for (uint8_t j = 0; j < c->want.n_extended; j++) {
			assert_string_equal(r.extended[j].name, c->want.extended[j].name);
			assert_int_equal(r.extended[j].value, c->want.extended[j].value);
			assert_int_equal(tj_pod_resources_extended(&r, c->want.extended[j].name),
			                 c->want.extended[j].value);
		}
		assert_int_equal(tj_pod_resources_extended(&r, "example.com/absent"), 0);
		cJSON_Delete(spec);
	}
	assert_int_equal(tj_pod_spec_requests(NULL, &(struct tj_pod_resources){ 0 }), 0);
}

static void test_extended_names(void **state)
{
	static const struct {
		const char *name;
		bool extended;
	} names[] = {
		{ "nvidia.com/gpu", true },
		{ "amd.com/gpu", true },
		{ "rdma/hca", true },
		{ "example.com/kubernetes.io", true },
		{ "notkubernetes.io/x", true },
		{ "cpu", false },
		{ "memory", false },
		{ "ephemeral-storage", false },
		{ "hugepages-1Gi", false },
		{ "kubernetes.io/batch", false },
		{ "node.kubernetes.io/x", false },
		{ "requests.nvidia.com/gpu", false },
		{ "/x", false },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		print_message("# case: %s\n", names[i].name);
		assert_int_equal(tj_resource_is_extended(names[i].name), names[i].extended);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requests_table),
		cmocka_unit_test(test_extended_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

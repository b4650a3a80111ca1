/* The MPI objects as Kubeflow Trainer's MPI plugin makes them for OpenMPI: the policy and
 * its defaults, the refusals, the slots, the hostfile, what launcher and node pods get, the
 * Secret and ConfigMap, and the OpenSSH form of the public key. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "reconcilers/mpi.h"

static struct tj_mpi_policy policy(const char *mpi_sq)
{
	struct tj_mpi_policy p = { 0 };
	cJSON *j = mpi_sq ? jlit(mpi_sq) : NULL;

	assert_int_equal(tj_mpi_policy_from_json(j, &p), 0);
	cJSON_Delete(j);
	return p;
}

static void test_policy_defaults(void **state)
{
	struct tj_mpi_policy p = policy(NULL);

	assert_false(p.enabled);
	assert_null(p.implementation);
	p = policy("{}");
	assert_true(p.enabled);
	assert_string_equal(p.implementation, "OpenMPI");
	assert_string_equal(p.ssh_auth_mount_path, "/root/.ssh");
	assert_int_equal(p.num_proc_per_node, 1);
	assert_false(p.run_launcher_as_node);
	tj_mpi_policy_clear(&p);
	assert_false(p.enabled);
	p = policy("{'numProcPerNode':4,'mpiImplementation':'MPICH','sshAuthMountPath':"
	           "'/home/mpiuser/.ssh','runLauncherAsNode':true}");
	assert_string_equal(p.implementation, "MPICH");
	assert_string_equal(p.ssh_auth_mount_path, "/home/mpiuser/.ssh");
	assert_int_equal(p.num_proc_per_node, 4);
	assert_true(p.run_launcher_as_node);
	tj_mpi_policy_clear(&p);
	/* Wrong types and values out of range count as unset. */
	p = policy("{'numProcPerNode':0,'mpiImplementation':7,'runLauncherAsNode':'yes'}");
	assert_int_equal(p.num_proc_per_node, 1);
	assert_string_equal(p.implementation, "OpenMPI");
	assert_false(p.run_launcher_as_node);
	tj_mpi_policy_clear(&p);
}

static void test_policy_too_long(void **state)
{
	char *path = malloc(4200), *doc = malloc(4300);
	struct tj_mpi_policy p = { .num_proc_per_node = 77 };
	cJSON *j;

	memset(path, 'a', 4097);
	path[4097] = '\0';
	snprintf(doc, 4300, "{\"sshAuthMountPath\":\"/%s\"}", path);
	j = cJSON_Parse(doc);
	assert_int_equal(tj_mpi_policy_from_json(j, &p), -E2BIG);
	assert_int_equal(p.num_proc_per_node, 77);
	cJSON_Delete(j);
	free(path);
	free(doc);
}

static void test_validate(void **state)
{
	static const struct {
		const char *what, *mpi, *spec;
		bool has_launcher, has_node;
		int rc;
		const char *reason, *message;
	} cases[] = {
		{ "OpenMPI runs", "{'mpiImplementation':'OpenMPI'}",
		  "{'runtimeRef':{'name':'mpi'},'trainer':{'numNodes':2}}", true, true, 0, "", "" },
		{ "not MPI at all", NULL, "{'runtimeRef':{'name':'mpi'}}", false, false, 0, "",
		  "" },
		{ "MPICH is refused", "{'mpiImplementation':'MPICH'}",
		  "{'runtimeRef':{'name':'mpi'}}", true, true, -EOPNOTSUPP, "UnsupportedRuntime",
		  "ClusterTrainingRuntime mpi: spec.mlPolicy.mpi.mpiImplementation 'MPICH' is not "
		  "supported; this controller runs OpenMPI only, as Kubeflow Trainer does" },
		{ "an empty implementation is refused", "{'mpiImplementation':''}",
		  "{'runtimeRef':{'name':'mpi'}}", true, true, -EOPNOTSUPP, "UnsupportedRuntime",
		  "ClusterTrainingRuntime mpi: spec.mlPolicy.mpi.mpiImplementation '' is not "
		  "supported; this controller runs OpenMPI only, as Kubeflow Trainer does" },
		{ "reserved env", "{}",
		  "{'runtimeRef':{'name':'mpi'},'trainer':{'env':[{'name':'A','value':'1'},"
		  "{'name':'OMPI_MCA_orte_default_hostfile','value':'/custom/hostfile'}]}}",
		  true, true, -EINVAL, "InvalidSpec",
		  "spec.trainer.env[1].name: OMPI_MCA_orte_default_hostfile is set by the "
		  "controller "
		  "for MPI and must not be set" },
		{ "numProcPerNode auto", "{}",
		  "{'runtimeRef':{'name':'mpi'},'trainer':{'numProcPerNode':'auto'}}", true, true,
		  -EINVAL, "InvalidSpec",
		  "spec.trainer.numProcPerNode: 'auto' must be an integer >= 1 with "
		  "ClusterTrainingRuntime mpi, an MPI runtime" },
		{ "launcher as node without a launcher", "{'runLauncherAsNode':true}",
		  "{'runtimeRef':{'name':'mpi'},'trainer':{'numNodes':2}}", false, true, -EINVAL,
		  "InvalidSpec",
		  "spec.trainer.numNodes: must be 1, as ClusterTrainingRuntime mpi runs the "
		  "launcher "
		  "as a node (runLauncherAsNode) but lacks a launcher replicatedJob" },
		{ "launcher as node, one node, no launcher", "{'runLauncherAsNode':true}",
		  "{'runtimeRef':{'name':'mpi'},'trainer':{'numNodes':1}}", false, true, 0, "",
		  "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_mpi_policy p = policy(cases[i].mpi);
		struct tj_trainjob *job = make_job(cases[i].spec);
		struct tj_problem why = { "", "" };

		print_message("# %s\n", cases[i].what);
		assert_int_equal(tj_mpi_validate(&p, "ClusterTrainingRuntime mpi",
		                                 cases[i].has_launcher, cases[i].has_node, job,
		                                 &why),
		                 cases[i].rc);
		assert_string_equal(why.reason, cases[i].reason);
		assert_string_equal(why.message, cases[i].message);
		tj_trainjob_free(job);
		tj_mpi_policy_clear(&p);
	}
}

static void test_slots_and_node_pods(void **state)
{
	static const struct {
		const char *mpi, *spec;
		long gpus;
		int slots;
	} slots[] = {
		{ "{}", "{'runtimeRef':{'name':'m'}}", 0, 1 },
		{ "{}", "{'runtimeRef':{'name':'m'}}", 4, 4 }, /* 1 becomes the GPUs */
		{ "{'numProcPerNode':2}", "{'runtimeRef':{'name':'m'}}", 4, 2 },
		{ "{'numProcPerNode':2}",
		  "{'runtimeRef':{'name':'m'},'trainer':{'numProcPerNode':5}}", 4, 5 },
		{ "{}", "{'runtimeRef':{'name':'m'}}", 1, 1 },
	};
	static const struct {
		bool as_node;
		int nodes, pods;
	} pods[] = {
		{ false, 1, 1 }, { false, 3, 3 }, { true, 1, 1 }, { true, 2, 1 }, { true, 4, 3 },
	};
	struct tj_mpi_policy off = { .run_launcher_as_node = true };

	for (size_t i = 0; i < sizeof(slots) / sizeof(slots[0]); i++) {
		struct tj_mpi_policy p = policy(slots[i].mpi);
		struct tj_trainjob *job = make_job(slots[i].spec);

		assert_int_equal(tj_mpi_slots(&p, job, slots[i].gpus), slots[i].slots);
		tj_trainjob_free(job);
		tj_mpi_policy_clear(&p);
	}
	for (size_t i = 0; i < sizeof(pods) / sizeof(pods[0]); i++) {
		struct tj_mpi_policy p = { .enabled = true,
			                   .run_launcher_as_node = pods[i].as_node };

		assert_int_equal(tj_mpi_node_pods(&p, pods[i].nodes), pods[i].pods);
	}
	/* Not an MPI runtime: every node is a node pod. */
	assert_int_equal(tj_mpi_node_pods(&off, 4), 4);
}

static void test_pod_gpus(void **state)
{
	static const struct {
		const char *pod;
		long gpus;
	} cases[] = {
		{ "{'spec':{'containers':[{'name':'node','resources':{'limits':{'nvidia.com/"
		  "gpu':4}}}]}}",
		  4 },
		{ "{'spec':{'containers':[{'name':'node','resources':{'requests':{'cpu':'2',"
		  "'amd.com/GPU':'2'},'limits':{'amd.com/GPU':'8'}}}]}}",
		  2 },
		{ "{'spec':{'containers':[{'name':'node','resources':{'requests':{'cpu':'2'}}}]}}",
		  0 },
		{ "{'spec':{'containers':[{'name':'side','resources':{'limits':{'nvidia.com/"
		  "gpu':4}}}]}}",
		  0 },
		{ "{'spec':{'containers':[{'name':'node','resources':{'limits':{'nvidia.com/"
		  "gpu':'x'}}}]}}",
		  0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *pod = jlit(cases[i].pod);

		assert_int_equal(tj_mpi_pod_gpus(pod), cases[i].gpus);
		cJSON_Delete(pod);
	}
}

static void test_runs_trainer(void **state)
{
	struct tj_mpi_policy mpi = { .enabled = true }, none = { 0 };
	cJSON *trainer =
	        jlit("{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"
	             "'trainer'}}}");
	cJSON *init = jlit("{'metadata':{'labels':{'trainer.kubeflow.org/trainjob-ancestor-step':"
	                   "'dataset-initializer'}}}");
	cJSON *bare = jlit("{'metadata':{}}");

	assert_true(tj_mpi_runs_trainer(&none, bare));
	assert_true(tj_mpi_runs_trainer(&mpi, trainer));
	assert_false(tj_mpi_runs_trainer(&mpi, init));
	assert_false(tj_mpi_runs_trainer(&mpi, bare));
	cJSON_Delete(trainer);
	cJSON_Delete(init);
	cJSON_Delete(bare);
}

static void test_hostfile(void **state)
{
	static const struct tj_mpi_step deepspeed[] = { { "node", 1, 2 }, { "launcher", 1, 1 } };
	static const struct tj_mpi_step launcher_first[] = { { "launcher", 1, 1 },
		                                             { "node", 1, 1 } };
	static const struct tj_mpi_step with_init[] = { { "dataset-initializer", 1, 1 },
		                                        { "launcher", 1, 1 },
		                                        { "node", 2, 2 } };
	static const struct {
		bool as_node;
		const struct tj_mpi_step *steps;
		size_t n;
		int slots;
		const char *want;
	} cases[] = {
		{ true, deepspeed, 2, 1,
		  "j-node-0-0.j slots=1\nj-node-0-1.j slots=1\nj-launcher-0-0.j slots=1\n" },
		{ false, deepspeed, 2, 4, "j-node-0-0.j slots=4\nj-node-0-1.j slots=4\n" },
		{ true, launcher_first, 2, 1, "j-launcher-0-0.j slots=1\nj-node-0-0.j slots=1\n" },
		{ false, with_init, 3, 2,
		  "j-node-0-0.j slots=2\nj-node-0-1.j slots=2\nj-node-1-0.j slots=2\n"
		  "j-node-1-1.j slots=2\n" },
		{ false, with_init, 1, 2, "" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tj_mpi_policy p = { .enabled = true,
			                   .run_launcher_as_node = cases[i].as_node };
		char *text = NULL;

		assert_int_equal(tj_mpi_hostfile(&p, "j", "j", cases[i].steps, cases[i].n,
		                                 cases[i].slots, &text),
		                 0);
		assert_string_equal(text, cases[i].want);
		free(text);
	}
	{
		struct tj_mpi_policy p = { .enabled = true };
		const struct tj_mpi_step huge[] = { { "node", 2, TJ_MAX_NODES } };
		const struct tj_mpi_step overflow[] = { { "node", INT32_MAX, INT32_MAX } };
		char *text = NULL;

		assert_int_equal(tj_mpi_hostfile(&p, "j", "sub", huge, 1, 1, &text), -E2BIG);
		assert_int_equal(tj_mpi_hostfile(&p, "j", "sub", overflow, 1, 1, &text), -E2BIG);
		assert_null(text);
	}
}

#define SSH_VOLUME                                                                                 \
	"{'name':'mpi-ssh-auth','secret':{'secretName':'vit-mpi-ssh-auth','defaultMode':256,"      \
	"'items':[{'key':'ssh-privatekey','path':'id_rsa','mode':416},"                            \
	"{'key':'ssh-publickey','path':'id_rsa.pub','mode':420},"                                  \
	"{'key':'ssh-publickey','path':'authorized_keys','mode':420}]}}"
#define HOSTFILE_VOLUME                                                                            \
	"{'name':'mpi-hostfile','configMap':{'name':'vit-mpi-hostfile','items':[{'key':"           \
	"'hostfile','path':'hostfile','mode':292}]}}"

static void test_apply_pod(void **state)
{
	static const char *const base =
	        "{'spec':{'containers':[{'name':'node','image':'ds','env':[{'name':'A','value':"
	        "'1'},{'name':'OMPI_MCA_orte_set_default_slots','value':'9'}],'volumeMounts':[{"
	        "'name':'old','mountPath':'/home/mpiuser/.ssh'}]},{'name':'sidecar'}],"
	        "'volumes':[{'name':'shm','emptyDir':{}},{'name':'mpi-ssh-auth','emptyDir':{}}]}}";
	static const struct {
		const char *step, *want;
	} cases[] = {
		{ "node",
		  "{'spec':{'containers':[{'name':'node','image':'ds','env':[{'name':'A','value':"
		  "'1'},{'name':'OMPI_MCA_orte_set_default_slots','value':'9'}],'volumeMounts':[{"
		  "'name':'mpi-ssh-auth','mountPath':'/home/mpiuser/.ssh'}]},{'name':'sidecar'}],"
		  "'volumes':[{'name':'shm','emptyDir':{}}," SSH_VOLUME "]}}" },
		{ "launcher",
		  "{'spec':{'containers':[{'name':'node','image':'ds','env':[{'name':'A','value':"
		  "'1'},{'name':'OMPI_MCA_orte_set_default_slots','value':'4'},"
		  "{'name':'OMPI_MCA_orte_default_hostfile','value':'/etc/mpi/hostfile'},"
		  "{'name':'OMPI_MCA_orte_keep_fqdn_hostnames','value':'true'},"
		  "{'name':'OMPI_MCA_plm_rsh_args','value':'-o ConnectionAttempts=10'}],"
		  "'volumeMounts':[{'name':'mpi-ssh-auth','mountPath':'/home/mpiuser/.ssh'},"
		  "{'name':'mpi-hostfile','mountPath':'/etc/mpi'}]},{'name':'sidecar'}],"
		  "'volumes':[{'name':'shm','emptyDir':{}}," SSH_VOLUME "," HOSTFILE_VOLUME "]}}" },
		{ "dataset-initializer", NULL },
	};
	struct tj_mpi_policy p = policy("{'sshAuthMountPath':'/home/mpiuser/.ssh'}");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *pod = jlit(base);

		assert_int_equal(tj_mpi_apply_pod(pod, cases[i].step, &p, "vit", 4), 0);
		assert_json_equal(pod, cases[i].want ? cases[i].want : base);
		cJSON_Delete(pod);
	}
	tj_mpi_policy_clear(&p);
	{
		/* Not an MPI runtime: nothing changes. */
		struct tj_mpi_policy none = { 0 };
		cJSON *pod = jlit(base);

		assert_int_equal(tj_mpi_apply_pod(pod, "launcher", &none, "vit", 4), 0);
		assert_json_equal(pod, base);
		cJSON_Delete(pod);
	}
}

#define OWNER                                                                                      \
	"'ownerReferences':[{'apiVersion':'trainer.kubeflow.org/v1alpha1','kind':'TrainJob',"      \
	"'name':'vit','uid':'uid-vit','controller':true,'blockOwnerDeletion':true}]"

static void test_secret_and_config_map(void **state)
{
	struct tj_trainjob *job = make_job("{'runtimeRef':{'name':'deepspeed-distributed'}}");
	cJSON *secret = NULL, *cm = NULL;

	assert_int_equal(tj_mpi_secret(job, &secret), 0);
	assert_json_equal(
	        secret, "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'vit-mpi-ssh-auth',"
	                "'namespace':'team-a','labels':{'trainer.kubeflow.org/trainjob-name':"
	                "'vit'}," OWNER "},'type':'kubernetes.io/ssh-auth','immutable':true}");
	assert_int_equal(
	        tj_mpi_secret_set_key(secret, "-----BEGIN EC PRIVATE KEY-----\n", "ecdsa k\n"), 0);
	assert_json_equal(
	        secret, "{'apiVersion':'v1','kind':'Secret','metadata':{'name':'vit-mpi-ssh-auth',"
	                "'namespace':'team-a','labels':{'trainer.kubeflow.org/trainjob-name':"
	                "'vit'}," OWNER "},'type':'kubernetes.io/ssh-auth','immutable':true,"
	                "'data':{'ssh-privatekey':'LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCg==',"
	                "'ssh-publickey':'ZWNkc2Egawo='}}");
	assert_int_equal(tj_mpi_config_map(job, "vit-node-0-0.vit slots=1\n", &cm), 0);
	assert_json_equal(cm, "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':"
	                      "'vit-mpi-hostfile','namespace':'team-a','labels':{"
	                      "'trainer.kubeflow.org/trainjob-name':'vit'}," OWNER "},"
	                      "'data':{'hostfile':'vit-node-0-0.vit slots=1\\n'}}");
	cJSON_Delete(secret);
	cJSON_Delete(cm);
	tj_trainjob_free(job);
}

/* A key made by ssh-keygen -t ecdsa -b 521: its public point (as `openssl ec -text` prints
 * it) and the line ssh-keygen wrote into the .pub file. Its x has a leading zero byte. */
static const uint8_t point_x[] = {
	0x00, 0x39, 0x0a, 0x7a, 0x78, 0xf7, 0x08, 0x81, 0x03, 0xbc, 0xd4, 0x02, 0x6d, 0xd4,
	0x38, 0x29, 0xe4, 0x6f, 0x6c, 0x8f, 0x43, 0x2d, 0x41, 0x46, 0x7d, 0x31, 0xea, 0xab,
	0xc1, 0x2c, 0x0b, 0x08, 0x9f, 0x6a, 0xe4, 0x1a, 0x55, 0x8e, 0x6c, 0x65, 0x42, 0x7c,
	0x4c, 0xd3, 0x0d, 0x73, 0x2d, 0xdd, 0x24, 0x06, 0xcf, 0xac, 0x61, 0xe0, 0x03, 0x30,
	0x30, 0x49, 0x76, 0xfd, 0x18, 0x97, 0x95, 0x8c, 0x23, 0x22,
};
static const uint8_t point_y[] = {
	0x01, 0xad, 0x74, 0x6b, 0x59, 0xe8, 0x62, 0x90, 0xb9, 0xf1, 0x5f, 0x15, 0xde, 0x22,
	0xc4, 0x78, 0x0d, 0x43, 0x41, 0xef, 0xba, 0x89, 0x51, 0x5d, 0x9e, 0x8c, 0x26, 0x2b,
	0x6d, 0x7d, 0xe1, 0xe0, 0xda, 0x40, 0xd9, 0x02, 0xeb, 0x35, 0x23, 0x6c, 0xf5, 0x60,
	0x2e, 0xba, 0x9e, 0x65, 0x50, 0xb5, 0xc3, 0x26, 0xbe, 0x04, 0x3e, 0xdb, 0xc5, 0x1a,
	0xb2, 0x61, 0x6f, 0x56, 0x9c, 0x6e, 0x70, 0xfd, 0x0e, 0x7f,
};
#define SSH_KEYGEN_LINE                                                                            \
	"ecdsa-sha2-nistp521 "                                                                     \
	"AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjEAAACFBAA5Cnp49wiBA7zUAm"                   \
	"3UOCnkb2yPQy1BRn0x6qvBLAsIn2rkGlWObGVCfEzTDXMt3SQGz6xh4AMwMEl2/"                          \
	"RiXlYwjIgGtdGtZ6GKQufFfFd4i"                                                              \
	"xHgNQ0HvuolRXZ6MJittfeHg2kDZAus1I2z1YC66nmVQtcMmvgQ+28UasmFvVpxucP0Ofw==\n"

static void test_authorized_key(void **state)
{
	uint8_t padded[70] = { 0 }, wide[67];
	char *line = NULL;

	assert_int_equal(
	        tj_mpi_authorized_key(point_x, sizeof(point_x), point_y, sizeof(point_y), &line),
	        0);
	assert_string_equal(line, SSH_KEYGEN_LINE);
	free(line);
	/* The same point with the leading zero dropped, or with more of them. */
	memcpy(padded + 4, point_x, sizeof(point_x));
	assert_int_equal(tj_mpi_authorized_key(point_x + 1, sizeof(point_x) - 1, point_y,
	                                       sizeof(point_y), &line),
	                 0);
	assert_string_equal(line, SSH_KEYGEN_LINE);
	free(line);
	assert_int_equal(
	        tj_mpi_authorized_key(padded, sizeof(padded), point_y, sizeof(point_y), &line), 0);
	assert_string_equal(line, SSH_KEYGEN_LINE);
	free(line);
	/* 67 significant bytes are not a P-521 coordinate. */
	line = NULL;
	memset(wide, 0x11, sizeof(wide));
	assert_int_equal(tj_mpi_authorized_key(wide, sizeof(wide), point_y, sizeof(point_y), &line),
	                 -EINVAL);
	assert_null(line);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_policy_too_long),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_slots_and_node_pods),
		cmocka_unit_test(test_pod_gpus),
		cmocka_unit_test(test_runs_trainer),
		cmocka_unit_test(test_hostfile),
		cmocka_unit_test(test_apply_pod),
		cmocka_unit_test(test_secret_and_config_map),
		cmocka_unit_test(test_authorized_key),
	};
	return cmocka_run_group_tests_name("mpi", tests, NULL, NULL);
}

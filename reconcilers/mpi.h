/* MPI (a runtime's spec.mlPolicy.mpi) as Kubeflow Trainer's MPI plugin gives it to OpenMPI:
 * what the launcher and the node pods get, and the two objects they mount.
 *
 * - Secret `<J>-mpi-ssh-auth`, type kubernetes.io/ssh-auth, immutable: `ssh-privatekey` (an
 *   ECDSA P-521 key as PEM "EC PRIVATE KEY") and `ssh-publickey` (its OpenSSH
 *   authorized_keys line). The key is generated where the Secret is written
 *   (controller/executor/mpi_key.h); this module builds the objects from a given key.
 * - ConfigMap `<J>-mpi-hostfile`, key `hostfile`: one line `<host> slots=<numProcPerNode>`
 *   per pod of the `node` step (and of the `launcher` step when runLauncherAsNode: the
 *   launcher is a node too), in the template's order of the steps, the host being the pod's
 *   DNS name `<J>-<step>-<replica>-<index>.<subdomain>`.
 * - The launcher and node pods: volume `mpi-ssh-auth` (the Secret, as id_rsa, id_rsa.pub and
 *   authorized_keys) mounted at sshAuthMountPath in their container `node`; the launcher
 *   also gets volume `mpi-hostfile` at /etc/mpi and the OMPI_MCA_* env that points OpenMPI
 *   at it, keeps the hosts' FQDNs, sets the default slots and retries ssh connections.
 * - Only OpenMPI: another mpiImplementation is refused (UnsupportedRuntime) before any pod
 *   exists, where Kubeflow fails the job only when it builds it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

#define TJ_MPI_SSH_AUTH_SUFFIX    "-mpi-ssh-auth"
#define TJ_MPI_HOSTFILE_SUFFIX    "-mpi-hostfile"
#define TJ_MPI_SSH_AUTH_VOLUME    "mpi-ssh-auth"
#define TJ_MPI_HOSTFILE_VOLUME    "mpi-hostfile"
#define TJ_MPI_HOSTFILE_DIR       "/etc/mpi"
#define TJ_MPI_HOSTFILE_KEY       "hostfile"
#define TJ_MPI_PRIVATE_KEY        "ssh-privatekey" /* corev1.SSHAuthPrivateKey */
#define TJ_MPI_PUBLIC_KEY         "ssh-publickey"
#define TJ_MPI_OPENMPI            "OpenMPI"
#define TJ_MPI_DEFAULT_MOUNT_PATH "/root/.ssh"

/* spec.mlPolicy.mpi of a runtime, with Kubeflow's defaults filled in. */
struct tj_mpi_policy {
	bool enabled; /* the runtime has spec.mlPolicy.mpi */
	/* owned; mpiImplementation as written ("OpenMPI" when unset); NULL when !enabled */
	char *implementation;
	int num_proc_per_node; /* >= 1; 1 when unset */
	/* owned; sshAuthMountPath ("/root/.ssh" when unset); NULL when !enabled */
	char *ssh_auth_mount_path;
	bool run_launcher_as_node;
};

/* Projects spec.mlPolicy.mpi (mpi may be NULL: not enabled). Fields of a wrong type count as
 * unset; an implementation or mount path longer than 4096 bytes is -E2BIG. -ENOMEM. *ret is
 * written only on success. */
int tj_mpi_policy_from_json(const cJSON *mpi, struct tj_mpi_policy *ret);

/* Frees the owned strings; the policy is then not enabled. */
void tj_mpi_policy_clear(struct tj_mpi_policy *p);

/* Whether the job may run with the runtime's policy (runtime names it, "ClusterTrainingRuntime
 * deepspeed-distributed"): an implementation other than OpenMPI is -EOPNOTSUPP with reason
 * UnsupportedRuntime naming spec.mlPolicy.mpi.mpiImplementation; trainer env setting one of
 * the OMPI_MCA_* names the controller sets, a numProcPerNode that is not an integer >= 1,
 * and, with runLauncherAsNode, more than one node when the runtime lacks a launcher or a
 * node step, are -EINVAL with reason InvalidSpec naming the field (Kubeflow's webhook
 * refuses those). 0 when the policy is not enabled. */
int tj_mpi_validate(const struct tj_mpi_policy *p, const char *runtime, bool has_launcher,
                    bool has_node, const struct tj_trainjob *job, struct tj_problem *why);

/* The processes per node, OpenMPI's slots: the TrainJob's numProcPerNode, else the
 * runtime's, which when it is 1 becomes the GPUs of a node (gpus_per_node) if there are more
 * than one. Call tj_mpi_validate first. */
int tj_mpi_slots(const struct tj_mpi_policy *p, const struct tj_trainjob *job, long gpus_per_node);

/* Whether the node step's pods (pod, with the labels of its template) run the TrainJob's
 * image, command and args: always without MPI; with MPI only when the node step is labelled
 * trainjob-ancestor-step=trainer, as Kubeflow gives them to that step (the launcher of its
 * MPI runtimes) while the nodes run the template's sshd. */
bool tj_mpi_runs_trainer(const struct tj_mpi_policy *p, const cJSON *pod);

/* The GPUs of a node as Kubeflow counts them for the slots: the first resource with "gpu"
 * in its name among the requests of the pod's container `node`, else among its limits; 0
 * if none. */
long tj_mpi_pod_gpus(const cJSON *pod);

/* The pods of the `node` step for num_nodes nodes: with runLauncherAsNode the launcher is
 * one of them, so num_nodes - 1, at least 1; num_nodes when the policy is not enabled. */
int tj_mpi_node_pods(const struct tj_mpi_policy *p, int num_nodes);

/* One step of the runtime's template, in the template's order, for the hostfile. */
struct tj_mpi_step {
	const char *name; /* borrowed */
	int replicas;     /* the replicated job's replicas */
	int pods;         /* pods per replica */
};

/* The hostfile text (*ret, owned by the caller): a line "<J>-<step>-<r>-<i>.<subdomain>
 * slots=<slots>" for every pod of the node step, and of the launcher step with
 * runLauncherAsNode. -ENOMEM; -E2BIG beyond TJ_MAX_NODES lines. */
int tj_mpi_hostfile(const struct tj_mpi_policy *p, const char *job, const char *subdomain,
                    const struct tj_mpi_step *steps, size_t n_steps, int slots, char **ret);

/* Adds the MPI volumes, mounts and (on the launcher) env to a pod of step "node" or
 * "launcher" of job; pods of other steps are left alone. Existing volumes, mounts and env
 * of the same names are replaced, as Kubeflow upserts them. -ENOMEM. */
int tj_mpi_apply_pod(cJSON *pod, const char *step, const struct tj_mpi_policy *p, const char *job,
                     int slots);

/* The Secret "<J>-mpi-ssh-auth" of type kubernetes.io/ssh-auth, immutable, owned by the
 * TrainJob, without its data: the plan cannot make a key (that reads the random source), so
 * the edge that writes the Secret adds one with tj_mpi_secret_set_key. -ENOMEM. */
int tj_mpi_secret(const struct tj_trainjob *job, cJSON **ret);

/* Sets the Secret's data: private_pem (the PEM text) and authorized_key (one
 * authorized_keys line), base64 as a Secret's data is. -ENOMEM. */
int tj_mpi_secret_set_key(cJSON *secret, const char *private_pem, const char *authorized_key);

/* The ConfigMap "<J>-mpi-hostfile" holding hostfile under key "hostfile", owned by the
 * TrainJob. -ENOMEM. */
int tj_mpi_config_map(const struct tj_trainjob *job, const char *hostfile, cJSON **ret);

/* The OpenSSH authorized_keys line ("ecdsa-sha2-nistp521 <base64>\n", as Go's
 * ssh.MarshalAuthorizedKey writes it) of the P-521 public point (x, y), big-endian
 * coordinates of any length: leading zeros are dropped or added to 66 bytes. -EINVAL when a
 * coordinate has more than 66 significant bytes; -ENOMEM. */
int tj_mpi_authorized_key(const uint8_t *x, size_t x_len, const uint8_t *y, size_t y_len,
                          char **ret);

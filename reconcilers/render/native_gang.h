/* Native gang scheduling: Kubernetes' own Workload API (scheduling.k8s.io/v1alpha2, served
 * from 1.36 when the feature gates GenericWorkload and GangScheduling and the API version
 * are on). Where the API server serves it, each TrainJob gets a Workload and a PodGroup
 * named after it, whose gang policy asks kube-scheduler to bind numNodes pods at once or
 * none, and every pod of the job names that PodGroup in spec.schedulingGroup. The
 * scheduler then places the gang all-or-nothing itself; pods created while it does not fit
 * stay unbound, holding no GPU.
 *
 * One PodGroup serves every attempt of the job: the scheduler counts only the pods that
 * still need or hold a node, so a Gang restart brings numNodes new pods, and a Worker
 * restart one pod that joins the ranks still bound. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

/* The only version whose objects this controller writes: 1.35's v1alpha1 had another
 * shape (pods named a Workload in spec.workloadRef), which 1.36 no longer serves. */
#define TJ_NATIVE_GANG_GROUP   "scheduling.k8s.io"
#define TJ_NATIVE_GANG_VERSION "v1alpha2"

/* The PodGroup template of the Workload, named after the replicated job it gangs. */
#define TJ_NATIVE_GANG_TEMPLATE "node"

/* Whether the discovery document of /apis/scheduling.k8s.io/v1alpha2 (an APIResourceList)
 * offers what the controller needs: workloads and podgroups that it may create. NULL (the
 * server answered 404) and any other document: false. Pure. */
bool tj_native_gang_served(const cJSON *resource_list);

/* The Workload of job: one PodGroup template TJ_NATIVE_GANG_TEMPLATE with a gang of
 * num_nodes, its controllerRef and a controller ownerReference naming the TrainJob, so
 * that garbage collection removes it with the job. -EINVAL for num_nodes < 1; -ENOMEM. */
int tj_native_gang_workload(const struct tj_trainjob *job, int num_nodes, cJSON **ret);

/* The PodGroup of job, made from the Workload's template: the same gang policy (the
 * scheduler reads the PodGroup's own), owned by the TrainJob. -EINVAL, -ENOMEM. */
int tj_native_gang_pod_group(const struct tj_trainjob *job, int num_nodes, cJSON **ret);

/* Makes a rendered pod of job a member of its PodGroup (spec.schedulingGroup.podGroupName).
 * -ENOMEM. */
int tj_native_gang_attach(cJSON *pod, const struct tj_trainjob *job);

/* Kubeflow Trainer's trainer status API (KEP-2779, trainer v2.2): the training code of a job's
 * pods reports its progress, its estimated remaining time and its metrics with a POST to the
 * controller, which writes them to the TrainJob's status.trainerStatus.
 *
 * What Kubeflow fixed and this file keeps exactly: the path of the endpoint and the audience
 * of the token, the environment variables and the mount of a pod, the request's body
 * ({"trainerStatus": {...}}) and the limits of the CRD's schema. Pure: the server that answers
 * the POST is controller/http/trainer_status_server.c. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "reconcilers/trainjob.h"

/* The pod's side, as Kubeflow's TrainJobStatus plugin wires a trainer container. */
#define TJ_TRAINER_STATUS_ENV_URL     "KUBEFLOW_TRAINER_SERVER_URL"
#define TJ_TRAINER_STATUS_ENV_CA_CERT "KUBEFLOW_TRAINER_SERVER_CA_CERT"
#define TJ_TRAINER_STATUS_ENV_TOKEN   "KUBEFLOW_TRAINER_SERVER_TOKEN"
#define TJ_TRAINER_STATUS_MOUNT_PATH  "/var/run/secrets/kubeflow/trainer"
#define TJ_TRAINER_STATUS_VOLUME      "kubeflow-trainer-token"
#define TJ_TRAINER_STATUS_TOKEN_FILE  "token"
#define TJ_TRAINER_STATUS_CA_FILE     "ca.crt"
/* The projected token's lifetime; the kubelet renews it before it expires. */
#define TJ_TRAINER_STATUS_TOKEN_SECONDS 3600
/* The port Kubeflow's status server listens on. */
#define TJ_TRAINER_STATUS_PORT 10443

/* The limits: the body of a request (as Kubeflow's server), and the CRD's. */
#define TJ_TRAINER_STATUS_MAX_BODY         (64 * 1024)
#define TJ_TRAINER_STATUS_MAX_METRICS      256
#define TJ_TRAINER_STATUS_MAX_METRIC_CHARS 64
/* Room for a path or an audience: two names of at most 253 bytes and the fixed parts. */
#define TJ_TRAINER_STATUS_PATH_MAX 640

/* "/apis/trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/NAME/status". */
void tj_trainer_status_path(const char *ns, const char *name,
                            char buf[static TJ_TRAINER_STATUS_PATH_MAX]);

/* The audience a job's tokens carry: "trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/
 * NAME/status", so that a token of one job is no token for another. */
void tj_trainer_status_audience(const char *ns, const char *name,
                                char buf[static TJ_TRAINER_STATUS_PATH_MAX]);

/* The namespace and name of a request's path (the form above, each a DNS label of at most 63
 * characters). -ENOENT for any other path. The outputs are written only on success. */
int tj_trainer_status_path_parse(const char *path, char ret_ns[static 64],
                                 char ret_name[static 64]);

/* Whether the user a TokenReview found may report for a job of namespace ns: a
 * ServiceAccount of that namespace ("system:serviceaccount:NS:NAME"), as Kubeflow's server
 * checks the token's namespace claim. */
bool tj_trainer_status_user_allowed(const char *user, const char *ns);

/* A request's body, checked against the CRD's schema: trainerStatus with progressPercentage
 * (0-100), estimatedRemainingSeconds (0 or more, int32), metrics (at most 256 of {name,
 * value}, each a string of 1 to 64 characters, no name twice) and lastUpdatedTime (required,
 * RFC 3339), and no other field. On success *ret_status is the trainerStatus to write, every
 * field present (null where the request had none, so that a merge patch forgets the previous
 * report's), lastUpdatedTime in whole seconds as the API server writes it; NULL when the
 * request has no trainerStatus (nothing to write). -EINVAL with reason Invalid and a line for
 * the client in *why, -E2BIG (reason RequestEntityTooLarge) for a body beyond
 * TJ_TRAINER_STATUS_MAX_BODY, -ENOMEM. */
int tj_trainer_status_parse(const char *body, size_t len, cJSON **ret_status,
                            struct tj_problem *why);

/* {"status": {"trainerStatus": status}}, the merge patch of the status subresource; status is
 * copied. NULL when out of memory. */
cJSON *tj_trainer_status_patch(const cJSON *status);

/* The wiring of the pods of job ns/name into spec: the env of the container named container,
 * a projected volume with a token of the job's audience (and the CA bundle of the ConfigMap
 * ca_config_map, key ca.crt, when not NULL) mounted read-only at
 * TJ_TRAINER_STATUS_MOUNT_PATH. base_url is the server's "https://HOST:PORT". The
 * template's own variables and volume of those names are replaced. -ENOMEM. */
int tj_trainer_status_add_to_pod(cJSON *spec, const char *container, const char *ns,
                                 const char *name, const char *base_url, const char *ca_config_map);

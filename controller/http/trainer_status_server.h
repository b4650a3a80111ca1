/* Kubeflow Trainer's trainer status API (reconcilers/trainer_status.h) served over HTTPS: a
 * POST to /apis/trainer.kubeflow.org/v1alpha1/namespaces/NS/trainjobs/NAME/status with a
 * bearer token is answered, in order:
 *
 *   413  a body over 64 KiB (by its Content-Length, before it is read);
 *   404  any other path;  405  another method;  401  no bearer token;
 *   403  a token the API server does not authenticate for the job's audience (TokenReview
 *        with spec.audiences), or one of a user that is no ServiceAccount of NS;
 *   422  a body that is not a trainerStatus the CRD accepts, with the reason;
 *   429  a write of this job less than a second ago, with Retry-After (status_limit.h);
 *   200  the status patched (merge patch of the status subresource), with the trainerStatus
 *        written; or the API server's refusal passed on (404 no such TrainJob, 422 invalid,
 *        500 otherwise), which is logged and, for a TrainJob that exists, told to the
 *        refused callback (the job gets a Warning Event).
 *
 * Errors are Kubernetes Status objects, as Kubeflow's server answers them. Token answers are
 * cached a minute, keyed by a digest of the token and the audience. Every replica serves it
 * (the writes need no lease). */
#pragma once

#include <uv.h>

#include "controller/http/http.h"
#include "kube/client.h"

struct tj_trainer_status_server;

/* A report of TrainJob ns/name whose status write the API server refused, with its message
 * (strings borrowed for the call). */
typedef void (*tj_trainer_status_refused_fn)(void *userdata, const char *ns, const char *name,
                                             const char *message);

/* Starts the server on addr with cert (borrowed, must outlive it); the client writes the
 * statuses and makes the reviews; refused (may be NULL) hears of the writes refused. When
 * addr is disabled, returns 0 and sets *ret to NULL. Errors as tj_http_serve_handler,
 * -ENOMEM. */
int tj_trainer_status_serve(uv_loop_t *loop, const struct tj_bind_addr *addr,
                            const struct tj_serving_cert *cert, struct tj_client *client,
                            tj_trainer_status_refused_fn refused, void *userdata,
                            struct tj_trainer_status_server **ret);

/* The port it listens on (useful after ":0"). */
int tj_trainer_status_server_port(const struct tj_trainer_status_server *s);

/* Stops listening and cancels the reviews and writes in flight; the rest is freed once the
 * libuv handles have closed (the loop must run on). Accepts NULL. */
void tj_trainer_status_server_close(struct tj_trainer_status_server *s);

#include "controller/discovery.h"

#include <errno.h>

#include "controller/log/log.h"
#include "kube/request.h"
#include "reconcilers/render/native_gang.h"

#define NATIVE_GANG_PATH "/apis/" TJ_NATIVE_GANG_GROUP "/" TJ_NATIVE_GANG_VERSION

struct answer {
	bool done;
	bool served;
	int rc;
};

static void answered(struct tj_response *resp, void *userdata)
{
	struct answer *a = userdata;

	a->done = true;
	if (resp->rc == 0) {
		a->served = tj_native_gang_served(resp->body);
		return;
	}
	if (resp->http_status == 404)
		return;
	a->rc = resp->rc;
	tj_log_error("discovery", "cannot tell whether the API server serves the Workload API",
	             TJ_STR("path", NATIVE_GANG_PATH), TJ_INT("http_status", resp->http_status),
	             TJ_STR("problem", resp->error));
}

int tj_discover_native_gang(struct tj_client *client, bool *ret_served)
{
	struct answer a = { 0 };
	int rc;

	rc = tj_kube_get_discovery(client, NATIVE_GANG_PATH, answered, &a, NULL);
	if (rc < 0)
		return rc;
	/* The request's own timer and sockets keep the loop busy until it answers. */
	while (!a.done)
		uv_run(tj_client_loop(client), UV_RUN_ONCE);
	if (a.rc < 0)
		return a.rc;
	tj_log_info("discovery",
	            a.served ? "the API server serves the Workload API: kube-scheduler places "
	                       "each gang whole"
	                     : "the API server does not serve the Workload API: no native gang "
	                       "scheduling",
	            TJ_STR("groupVersion", TJ_NATIVE_GANG_GROUP "/" TJ_NATIVE_GANG_VERSION));
	*ret_served = a.served;
	return 0;
}

#include "cli/manifest.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/json.h"

int tj_manifest_trainjob(cJSON *doc, struct tj_trainjob **ret, bool *ret_resumed)
{
	struct tj_trainjob *job = NULL;
	bool resumed;
	int r;

	/* kubectl applies a manifest without a namespace to "default". */
	if (!tj_json_string(doc, "metadata.namespace") &&
	    cJSON_IsObject(tj_json_path(doc, "metadata")))
		tj_json_set_string((cJSON *)tj_json_path(doc, "metadata"), "namespace", "default");
	r = tj_trainjob_from_json(doc, &job);
	if (r < 0)
		return r;
	/* As the controller sees a new job: the uid the API server would give it is unknown. */
	if (!*job->uid) {
		char *uid = strdup(TJ_MANIFEST_UID);

		if (!uid) {
			tj_trainjob_free(job);
			return -ENOMEM;
		}
		free(job->uid);
		job->uid = uid;
	}
	/* Render what the job becomes when it runs, not the nothing of a suspended job. */
	resumed = job->suspend;
	job->suspend = false;
	*ret = job;
	*ret_resumed = resumed;
	return 0;
}

/* The gang of a plan (plan.h): its pods created whole, pinned to the nodes admission chose,
 * or the job queued until they fit; the Service and the start; a gang given back when the
 * scheduler cannot place a pinned pod. */
#include "reconcilers/plan/plan_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reconcilers/admission/launcher_hold.h"
#include "reconcilers/json.h"
#include "reconcilers/plan/refusal.h"
#include "reconcilers/render/job_metadata.h"
#include "reconcilers/render/native_gang.h"

/* The headless Service, posted with every batch of pods and until a status with the start
 * time is written (a later stage than the Service, so that a controller that stops in
 * between posts it again): there is no Service cache, and a repeated create costs one
 * AlreadyExists. Then the start time, and the event that announces it. */
static void post_service(struct planner *p)
{
	struct tj_action *a = tj_planner_push(p, TJ_ACTION_CREATE_SERVICE, SLOT_MUTATION);

	if (!a)
		return;
	copy(a->name, sizeof(a->name), p->job->name);
	if (tj_render_service(p->job, &a->object) < 0 ||
	    tj_job_metadata_apply(tj_json_object(a->object, "metadata"), p->job, p->in->runtime,
	                          NULL) < 0)
		p->oom = true;
	if (!p->st.start_time) {
		p->st.start_time = p->in->now;
		tj_planner_event(p, false, "Created", "creating %d pod%s from %s %s", p->num_nodes,
		                 p->num_nodes == 1 ? "" : "s",
		                 tj_runtime_kind_name(p->in->runtime->kind), p->in->runtime->name);
	}
}

/* With native gang scheduling, the job's Workload and PodGroup go with every batch of pods,
 * as the Service does, and again while a pod of the job waits unbound (a PodGroup whose
 * create failed would hold its pods forever): there is no cache of them, and a repeated
 * create costs one AlreadyExists. The API server admits a PodGroup only once its Workload
 * exists, so the Workload goes a stage first; the scheduler waits for a PodGroup that
 * comes after its pods. */
static void post_native_gang(struct planner *p)
{
	struct tj_action *w = tj_planner_push(p, TJ_ACTION_CREATE_WORKLOAD, SLOT_PREREQUISITE);
	struct tj_action *g = tj_planner_push(p, TJ_ACTION_CREATE_POD_GROUP, SLOT_MUTATION);

	if (!w || !g)
		return;
	copy(w->name, sizeof(w->name), p->job->name);
	copy(g->name, sizeof(g->name), p->job->name);
	if (tj_native_gang_workload(p->job, p->num_nodes, &w->object) < 0 ||
	    tj_native_gang_pod_group(p->job, p->num_nodes, &g->object) < 0)
		p->oom = true;
}

/* Whether a live pod of the current attempt waits for a node. */
static bool has_unbound_pods(const struct planner *p)
{
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];

		if (pod && !is_finished(pod) && !is_deleting(pod) &&
		    !(pod->node_name && *pod->node_name))
			return true;
	}
	return false;
}

/* The live pods of the current attempt. */
static int live_pods(const struct planner *p)
{
	int n = 0;

	for (int r = 0; r < p->num_nodes; r++)
		n += p->current[r] && !is_finished(p->current[r]) && !is_deleting(p->current[r]);
	return n;
}

/* Whether a live pod of the current attempt exists: the gang was created, in part at least. */
static bool has_live_pods(const struct planner *p)
{
	return live_pods(p) > 0;
}

/* Whether the job held its gang before (it started, or part of its gang lives): what it
 * asks the queue for is a restart, ahead of every queued job of its class. */
static bool held_gang(const struct planner *p)
{
	return p->st.start_time != 0 || has_live_pods(p);
}

/* Whether a pod of the current attempt is being deleted. */
static bool has_going_pods(const struct planner *p)
{
	for (int r = 0; r < p->num_nodes; r++)
		if (p->current[r] && is_deleting(p->current[r]))
			return true;
	return false;
}

/* The admission is for this gang: its missing ranks, and the launcher's place when it
 * needs one. */
static bool is_admitted(const struct planner *p, int missing, const cJSON *launcher)
{
	const struct tj_admission_ticket *adm = p->in->ticket;

	return !adm || (adm->admitted && adm->n_nodes == (size_t)missing &&
	                (adm->launcher_node != NULL) == (launcher != NULL));
}

/* The first pod of the batch holds the launcher's place (reconcilers/admission/launcher_hold.h). */
static int hold_launcher(cJSON *pod, const cJSON *launcher, const struct tj_admission_ticket *adm)
{
	char *text = NULL;
	int r = tj_launcher_hold_format(launcher, adm->launcher_node, &text);

	if (r == 0)
		r = tj_json_set_string(
		        tj_json_object(tj_json_object(pod, "metadata"), "annotations"),
		        TJ_ANNOTATION_LAUNCHER_HOLD, text);
	free(text);
	return r;
}

/* The built-in queue has the job although it asks for Kueue's: the controller runs without
 * the Kueue integration, and nobody else would admit it. Said with the queue's first
 * verdict (the plan before it writes nothing), whether it queues, admits or fails the job. */
static void say_kueue_label_ignored(struct planner *p)
{
	enum tj_state was = p->job->status.state;

	if (!p->job->kueue || p->job->status.start_time || was == TJ_STATE_QUEUED ||
	    was == TJ_STATE_RESTARTING)
		return;
	tj_planner_event(p, true, "KueueLabelIgnored",
	                 "the label " TJ_LABEL_KUEUE_QUEUE " is ignored: this controller runs "
	                 "without Kueue (--kueue), so the job is queued by its own admission");
}

/* A restart whose replacements have waited restart_wait since the failure, while the job's
 * live ranks hold their nodes, gives those back: a partial gang holds GPUs nobody can use,
 * and whole, the job is the head of its class with a reservation of its own, which a
 * restart's few replacements may never get on a full class. Until then, the plan runs again
 * when the wait ends. */
static bool give_back_live_ranks(struct planner *p)
{
	const struct tj_admission_ticket *adm = p->in->ticket;
	int64_t since = p->st.last_failure.time, waited = p->in->now - since;
	int live = live_pods(p);

	if (adm->restart_wait <= 0 || since <= 0 || live == 0)
		return false;
	if (waited < adm->restart_wait) {
		requeue(p, adm->restart_wait - waited);
		return false;
	}
	tj_planner_delete_live_pods(p);
	tj_planner_set_state(p, TJ_STATE_RESTARTING, TJ_ADMISSION_REASON_RESOURCES,
	                     "the replacements found no room within %lld s of the failure of rank "
	                     "%d; the %d live ranks gave their nodes back, and the gang waits "
	                     "for admission whole",
	                     (long long)adm->restart_wait, p->st.last_failure.rank, live);
	tj_planner_event(p, true, "GangReleased", "%s", p->st.message);
	p->queued = true;
	return true;
}

/* What the gang asks the queue for: num_pods pods of its shape, from the first rank that has
 * none (rank 0 when every rank has one), and the launcher that needs a place with them
 * (owned). False without memory. */
static bool want_gang(struct planner *p, const struct tj_render *render, int num_pods, bool restart,
                      cJSON *launcher)
{
	const struct tj_gpu_class *cls = tj_render_gpu_class(render);
	int first = 0;

	while (first < p->num_nodes && (p->current[first] || p->blocked[first]))
		first++;
	if (first == p->num_nodes)
		first = 0;
	p->request.want = (struct tj_plan_want){
		.wanted = true,
		.num_nodes = p->num_nodes,
		.num_pods = num_pods,
		.restart = restart,
		.not_before = tj_planner_backoff_end(p),
		.walltime = p->walltime.seconds,
		.tier = p->qos ? p->qos->priority : 0,
		.preempts = p->qos ? p->qos->preempts : 0,
		.preempt_after = p->qos ? p->qos->preempt_after_seconds : 0,
		.backfill_reserved_nodes = p->qos && p->qos->backfill_reserved_nodes,
		.qos = tj_qos_index(tj_config_admission(p->in->config), p->qos),
		.launcher = launcher,
	};
	copy(p->request.want.gpu_class, sizeof(p->request.want.gpu_class), cls ? cls->name : NULL);
	if (tj_render_pod(render, first, p->st.restart_count, &p->request.want.pod) < 0 ||
	    (p->n_excluded && !(p->request.want.excluded = calloc(
	                                p->n_excluded, sizeof(*p->request.want.excluded))))) {
		p->oom = true;
		return false;
	}
	for (size_t i = 0; i < p->n_excluded; i++) {
		if (!(p->request.want.excluded[i] = strdup(p->excluded[i]))) {
			p->oom = true;
			return false;
		}
		p->request.want.n_excluded = i + 1;
	}
	return true;
}

/* want_gang for num_pods ranks, with the launcher that needs a place with them. */
static void want_ranks(struct planner *p, const struct tj_render *render, int num_pods,
                       bool restart)
{
	cJSON *launcher = NULL;

	if (tj_planner_mpi_launcher(p, &launcher) < 0)
		p->oom = true;
	else
		want_gang(p, render, num_pods, restart, launcher);
}

/* Pods of the gang are going (a stopped attempt's, a replaced attempt's, the live ranks
 * given back) and the gang is created again only once they are gone. A restart (a job that
 * started, or has live ranks) asks the queue meanwhile for every rank they leave with the
 * ranks that have no pod, as it will once they are gone: it is ahead of every queued job of
 * its class, and without a want the queue would drop it while they go (for their grace
 * period) and could admit the jobs behind it on the GPUs that come free in between. An
 * admission that comes meanwhile keeps its nodes until the pods are gone, and the plan after
 * their deletion creates the gang. A job that never started (preempted, requeued, given
 * back before its start) rejoins the queue once they are gone, in its order: admitted
 * while they go, it would hold its new nodes idle until then. */
static void wait_for_going_pods(struct planner *p, const struct tj_render *render)
{
	int ranks = 0;

	if (!held_gang(p))
		return;
	for (int r = 0; r < p->num_nodes; r++)
		ranks += !p->current[r] || is_deleting(p->current[r]);
	want_ranks(p, render, ranks, true);
}

/* The failed pod's node came free as it failed: a cycle of the queue before the job's next
 * plan would find the job wanting nothing, and could give that room, with the nodes the
 * replacements need, to the jobs behind it. So the plan that restarts the job already asks for
 * them, ahead of the queue, from the end of the backoff (the queue holds their nodes until
 * then). */
void tj_planner_want_replacements(struct planner *p, const struct tj_render *render, bool gang,
                                  const struct tj_pod *failed)
{
	int ranks = 0;

	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];

		ranks += gang || !pod || pod == failed || is_deleting(pod) ||
		         pod->phase == TJ_POD_FAILED;
	}
	want_ranks(p, render, ranks, true);
}

/* The gang waits for admission: say what it needs, and what the queue said of it. The
 * launcher that needs a place with it (owned) goes into the want. */
static void queue_gang(struct planner *p, const struct tj_render *render, int missing,
                       cJSON *launcher)
{
	const struct tj_admission_decision *d = p->in->ticket->decision;
	bool restart = held_gang(p);

	/* The admission of a gang this plan does not create (an earlier one's, the queue's entry
	 * not decided again yet) says nothing of this one: it is waiting to be decided. Nor does
	 * a wait for the end of the backoff, once it is over. */
	if (d && (d->verdict == TJ_ADMISSION_ADMITTED ||
	          strcmp(d->reason, TJ_ADMISSION_REASON_BEGIN) == 0))
		d = NULL;
	p->queued = true;
	if (d)
		say_kueue_label_ignored(p);
	if (d && d->verdict == TJ_ADMISSION_NEVER_FITS) {
		cJSON_Delete(launcher);
		tj_planner_fail(p, d->reason, d->message);
		return;
	}
	if (d && d->verdict == TJ_ADMISSION_WAITING && give_back_live_ranks(p)) {
		/* Already now the whole gang, as while its pods go (wait_for_going_pods). */
		want_gang(p, render, p->num_nodes, true, launcher);
		return;
	}
	if (!want_gang(p, render, missing, restart, launcher))
		return;
	tj_planner_set_state(p, restart ? TJ_STATE_RESTARTING : TJ_STATE_QUEUED,
	                     d ? d->reason : TJ_ADMISSION_REASON_RESOURCES, "%s",
	                     d ? d->message : "waiting for admission");
	p->st.expected_start_time = d ? d->expected_start : 0;
	p->st.queue_position = d ? d->position : 0;
	if (p->st.state == TJ_STATE_QUEUED && p->job->status.state != TJ_STATE_QUEUED && d)
		tj_planner_event(p, false, "Queued", "%s", p->st.message);
}

/* Announces the admission of the gang: the node of each rank, from the pods that exist
 * (pinned, or bound) and from assigned, the nodes of the pods this plan creates (NULL for
 * none): "4 pods pinned to gh200-1, gh200-2, gh200-3, gh200-4". Also when a plan that
 * created the pods lost its status patch (and its events) to a conflict, so that the
 * retry, which records the start, tells it. */
static void announce_admission(struct planner *p, const char *const *assigned)
{
	const struct tj_admission_ticket *adm = p->in->ticket;
	struct tj_launcher_hold hold;
	const char *launcher = NULL;
	char nodes[512];
	size_t len = 0, shown = 0;
	int n = 0;

	nodes[0] = '\0';
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];
		const char *node = pod        ? tj_or(pod->pinned_node, pod->node_name)
		                   : assigned ? assigned[r]
		                              : NULL;

		if (!node)
			continue;
		n++;
		if (shown < 8 && len < sizeof(nodes)) {
			len += (size_t)snprintf(nodes + len, sizeof(nodes) - len, "%s%s",
			                        shown ? ", " : "", node);
			shown++;
		}
	}
	if ((size_t)n > shown && len < sizeof(nodes))
		len += (size_t)snprintf(nodes + len, sizeof(nodes) - len, " and %zu more",
		                        (size_t)n - shown);
	/* The launcher's place: admitted now, or held by a pod that exists. */
	if (adm->launcher_node)
		launcher = adm->launcher_node;
	else if (tj_planner_mpi_hold(p, &hold))
		launcher = hold.node;
	if (launcher && len < sizeof(nodes))
		snprintf(nodes + len, sizeof(nodes) - len, ", the launcher's place on %s",
		         launcher);
	p->request.backfilled = adm->decision && adm->decision->verdict == TJ_ADMISSION_ADMITTED &&
	                        adm->decision->backfilled;
	say_kueue_label_ignored(p);
	tj_planner_event(p, false, "Admitted", "%d pod%s pinned to %s%s", n, n == 1 ? "" : "s",
	                 nodes,
	                 p->request.backfilled ? " (backfilled ahead of the queue's head)" : "");
}

/* Holds a pod back with the gang's scheduling gate: created with its gang, it holds no node
 * until every pod of the gang exists (ungate), so that a create the API server refuses
 * (a ResourceQuota, a LimitRange, a webhook) never leaves part of a gang running. */
static int gate(cJSON *pod)
{
	cJSON *gate = cJSON_CreateObject();

	if (!gate || tj_json_set_string(gate, "name", TJ_SCHEDULING_GATE) < 0) {
		cJSON_Delete(gate);
		return -ENOMEM;
	}
	return tj_json_append(tj_json_array(tj_json_object(pod, "spec"), "schedulingGates"), gate);
}

/* Every pod of the gang exists: the gates of those that still have it are lifted, leaving
 * the gates of the runtime's own template (a pod's gates can only be removed). The uid in
 * the body makes the patch fail rather than touch a newer pod of that name. */
static void ungate(struct planner *p, const struct tj_render *render)
{
	const cJSON *own = NULL;
	cJSON *pod = NULL;
	bool any = false;

	for (int r = 0; r < p->num_nodes && !any; r++)
		any = p->current[r] && p->current[r]->gated && !is_deleting(p->current[r]) &&
		      !is_finished(p->current[r]);
	if (!any)
		return;
	if (tj_render_pod(render, 0, p->st.restart_count, &pod) < 0) {
		p->oom = true;
		return;
	}
	own = tj_json_path(pod, "spec.schedulingGates");
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *cur = p->current[r];
		struct tj_action *a;
		cJSON *spec;

		if (!cur || !cur->gated || is_deleting(cur) || is_finished(cur))
			continue;
		if (!(a = tj_planner_push(p, TJ_ACTION_PATCH_POD, SLOT_MUTATION)))
			break;
		copy(a->name, sizeof(a->name), cur->name);
		a->ungate = true;
		a->object = cJSON_CreateObject();
		spec = tj_json_object(a->object, "spec");
		if (!spec ||
		    tj_json_set_string(tj_json_object(a->object, "metadata"), "uid", cur->uid) <
		            0 ||
		    tj_json_set(spec, "schedulingGates",
		                own ? cJSON_Duplicate(own, true) : cJSON_CreateNull()) < 0) {
			p->oom = true;
			break;
		}
	}
	cJSON_Delete(pod);
}

/* A gang whose pods exist only in part, the others neither admitted nor being created: the
 * API server refused a create (the status says FailedCreate, once the executor has written
 * it), or a controller stopped in the middle of the creates. The pods that were created wait
 * behind their gate, holding no node; they are deleted, so that the gang is created again
 * whole, once it can be. The gang keeps its place in the queue meanwhile: it asks for all
 * its pods, which its next plan creates once the deleted ones have gone. True if so. */
static bool drop_partial_gang(struct planner *p, const struct tj_render *render)
{
	const struct tj_admission_ticket *adm = p->in->ticket;
	bool refused = strcmp(p->job->status.reason, TJ_REASON_FAILED_CREATE) == 0;
	int gated = 0;

	if (adm->admitted || adm->creating)
		return false;
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *cur = p->current[r];

		if (cur && !is_deleting(cur) && !is_finished(cur) && !cur->gated)
			return false; /* part of the gang runs: its missing ranks are a restart */
		gated += cur && cur->gated && !is_deleting(cur) && !is_finished(cur);
	}
	if (!gated)
		return false;
	for (int r = 0; r < p->num_nodes; r++)
		if (p->current[r] && p->current[r]->gated && !is_deleting(p->current[r]))
			tj_planner_delete_pod(p, p->current[r]);
	tj_planner_set_state(
	        p, p->st.restart_count > 0 ? TJ_STATE_RESTARTING : TJ_STATE_QUEUED,
	        refused ? TJ_REASON_FAILED_CREATE : TJ_ADMISSION_REASON_RESOURCES,
	        "%s%s%d pod%s of the gang, created before the rest, held no node and %s deleted; "
	        "the gang is created again whole once it can be",
	        refused ? p->job->status.message : "the gang's creates stopped part way", "; the ",
	        gated, gated == 1 ? "" : "s", gated == 1 ? "is" : "are");
	tj_planner_event(p, true, refused ? "GangRefused" : "GangIncomplete", "%s", p->st.message);
	/* Said before the deletes, which no later plan repeats: the pods' deletion plans the
	 * job again at once, and that plan would supersede a status and events left for the
	 * write gate. */
	p->status_first = true;
	p->queued = true;
	/* Without a want, the queue would drop the gang until its pods have gone, and could
	 * admit the job behind it in between (after a restart, the first cycle can). */
	want_ranks(p, render, p->num_nodes, p->st.start_time != 0);
	return true;
}

void tj_planner_create_pods(struct planner *p, const struct tj_render *render)
{
	const struct tj_admission_ticket *adm = p->in->ticket;
	const char **assigned = NULL;
	cJSON *launcher = NULL;
	int created = 0, missing = 0, need = 0;
	size_t pinned = 0;
	bool hold, failed = false;

	/* missing: the ranks whose pod this plan may create; need: every rank that needs a pod,
	 * also those whose old pod has yet to go and the failed one still there. */
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];
		bool recorded = is_recorded_failure(p, pod);

		missing += !pod && !p->blocked[r];
		need += !pod || recorded;
		failed = failed || recorded;
	}
	/* With the queue, the pods of a stopped attempt (preempted, requeued, suspended, a gang
	 * given back) go before the gang is admitted again, whole, and so do those of a started
	 * job none of whose ranks lives any more (its live ranks given back when a replacement
	 * found no room): the ranks whose pod is gone already would otherwise be created alone,
	 * and run while the others go (and a new pod of the same name is refused while the old
	 * one is being deleted). Their deletions plan the job again; its status stays as the
	 * stop left it. */
	if (adm && (!p->st.start_time || !has_live_pods(p)) && has_going_pods(p)) {
		p->queued = true;
		wait_for_going_pods(p, render);
		return;
	}
	/* A failed rank whose pod is still there (the plans after the restart's, until it is kept
	 * for its logs or gone) needs a pod as much as one that has none, and gets it once that
	 * pod is out of the way. The queue is asked for it meanwhile, as by the plan that
	 * restarted the job (tj_planner_want_replacements): a plan that wanted nothing would have
	 * the queue drop the job, and a cycle before the next plan could give the room the
	 * failure freed, with the nodes the replacement needs, to the jobs behind. */
	if (adm && failed) {
		want_ranks(p, render, need, held_gang(p));
		return;
	}
	if (need == 0) {
		/* Every pod exists, but no status has recorded this start (a first start, or a
		 * resume): the plan that created them stopped before its status patch, and the
		 * Service may be missing as well. */
		if (!p->st.start_time) {
			if (adm)
				announce_admission(p, NULL);
			post_service(p);
		}
		if (p->in->native_gang && has_unbound_pods(p))
			post_native_gang(p);
		if (adm)
			ungate(p, render);
		return;
	}
	if (adm && drop_partial_gang(p, render))
		return;
	if (tj_planner_backing_off(p)) {
		/* The queue keeps the restart's place and holds nodes for it from the backoff's end
		 * (its not_before): without a want it would drop the job, and the jobs behind could
		 * take the nodes its replacements need: all of them, the ranks whose old pod is
		 * still going too. */
		if (adm)
			want_ranks(p, render, need, held_gang(p));
		return;
	}
	/* A replaced attempt's pods go before the new gang is admitted, whole: the ranks whose
	 * old pod is gone would otherwise hold their GPUs while the others wait. */
	for (int r = 0; adm && r < p->num_nodes; r++) {
		if (p->blocked[r]) {
			wait_for_going_pods(p, render);
			return;
		}
	}
	if (adm && tj_planner_mpi_launcher(p, &launcher) < 0) {
		p->oom = true;
		return;
	}
	if (!is_admitted(p, missing, launcher)) {
		queue_gang(p, render, missing, launcher);
		return;
	}
	if (adm && !(assigned = calloc((size_t)p->num_nodes, sizeof(*assigned)))) {
		p->oom = true;
		goto out;
	}
	/* A gang of one pod is whole with its one create: a refusal leaves nothing behind to
	 * undo, so it goes without the gate, and the scheduler may bind it at once (no patch
	 * to lift a gate, and no round trip before it). */
	hold = adm && missing > 1;
	for (int r = 0; r < p->num_nodes; r++) {
		struct tj_action *a;

		if (p->current[r] || p->blocked[r])
			continue;
		a = tj_planner_push(p, TJ_ACTION_CREATE_POD, SLOT_MUTATION);
		if (!a)
			goto out;
		tj_render_pod_name(p->job->name, r, p->st.restart_count, a->name);
		if (tj_render_pod(render, r, p->st.restart_count, &a->object) < 0 ||
		    (p->in->native_gang && tj_native_gang_attach(a->object, p->job) < 0) ||
		    (adm && tj_render_pin(a->object, adm->nodes[pinned]) < 0) ||
		    (hold && gate(a->object) < 0) ||
		    (launcher && created == 0 && hold_launcher(a->object, launcher, adm) < 0)) {
			p->oom = true;
			goto out;
		}
		if (adm)
			assigned[r] = adm->nodes[pinned++];
		created++;
	}
	if (adm && created > 0) {
		p->request.admits = true;
		announce_admission(p, assigned);
	}
	if (created > 0 && p->in->native_gang)
		post_native_gang(p);
	if (created > 0)
		post_service(p);
out:
	cJSON_Delete(launcher);
	free(assigned);
}

/* Notes the node a stuck pod was pinned to, once, in plan.refused. */
static void note_refused(struct planner *p, const struct tj_pod *pod)
{
	if (!pod->pinned_node || p->request.n_refused >= TJ_PLAN_MAX_REFUSED)
		return;
	for (size_t i = 0; i < p->request.n_refused; i++)
		if (strcmp(p->request.refused[i], pod->pinned_node) == 0)
			return;
	copy(p->request.refused[p->request.n_refused++], TJ_NAME_MAX, pod->pinned_node);
}

/* A pinned pod the scheduler still cannot place after pin_timeout: something the admission
 * did not see keeps it off its node. The whole gang goes back to the queue, since a partial
 * gang holds GPUs that nobody can use; the walltime clock of a first start stops with it;
 * and the nodes that refused its pods are named (plan.refused), so that the admission keeps
 * the job off them for a while. */
bool tj_planner_give_back(struct planner *p, const struct tj_render *render)
{
	const struct tj_admission_ticket *adm = p->in->ticket;
	const struct tj_pod *stuck = NULL;

	if (!adm || adm->pin_timeout <= 0)
		return false;
	for (int r = 0; r < p->num_nodes; r++) {
		const struct tj_pod *pod = p->current[r];
		int64_t age;

		if (!pod || is_finished(pod) || is_deleting(pod) || !pod->unschedulable ||
		    (pod->node_name && *pod->node_name))
			continue;
		age = p->in->now - pod->creation_time;
		if (age >= adm->pin_timeout) {
			stuck = stuck ? stuck : pod;
			note_refused(p, pod);
		} else {
			requeue(p, adm->pin_timeout - age);
		}
	}
	if (!stuck)
		return false;
	tj_planner_delete_live_pods(p);
	if (p->st.restart_count == 0) {
		p->st.start_time = 0;
		p->st.deadline = 0;
	}
	tj_planner_set_state(
	        p, p->st.restart_count > 0 ? TJ_STATE_RESTARTING : TJ_STATE_QUEUED,
	        TJ_ADMISSION_REASON_RESOURCES,
	        "rank %d could not be scheduled on its node %s within %lld s (%s); the gang was "
	        "given back and waits for admission again, kept off that node for %d minutes",
	        stuck->rank, tj_or(stuck->pinned_node, "?"), (long long)adm->pin_timeout,
	        tj_or(stuck->unschedulable_message, "unschedulable"), TJ_PLAN_REFUSAL_MINUTES);
	tj_planner_event(p, true, "GangReleased", "%s", p->st.message);
	p->queued = true;
	/* A restart's gang asks for all of it at once, as while its pods go
	 * (wait_for_going_pods). */
	if (p->st.start_time)
		want_ranks(p, render, p->num_nodes, true);
	return true;
}
